import Foundation

/// A clock that moves only when a test says so (`advance(by:)`), for time-outs and retry
/// backoff tested without waiting on the wall clock. Sleepers wake, in deadline order, when the
/// clock reaches their deadline, or with `CancellationError` when their task is cancelled.
/// `sleepers(atLeast:)` lets a test wait until the code under test is asleep before advancing.
public final class ManualClock: Clock, @unchecked Sendable {
    // @unchecked: every mutable field is guarded by `lock`.

    /// A point on the manual clock: the time advanced since it started.
    public struct Instant: InstantProtocol {
        /// How far the clock had been advanced.
        public var offset: Duration

        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct Sleeper {
        var deadline: Instant
        var continuation: CheckedContinuation<Void, Error>
    }

    private let lock = NSLock()
    private var current = Instant(offset: .zero)
    private var sleeping: [UInt64: Sleeper] = [:]
    private var nextID: UInt64 = 0
    private var slept: [Duration] = []
    private var watchers: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

    /// A clock at zero.
    public init() {}

    public var now: Instant { lock.withLock { current } }
    public var minimumResolution: Duration { .zero }

    /// Every sleep asked for so far, as durations from the moment it was asked (retry backoff
    /// shows up here).
    public var sleeps: [Duration] { lock.withLock { slept } }

    /// How many tasks are asleep on this clock.
    public var sleeperCount: Int { lock.withLock { sleeping.count } }

    public func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        let id: UInt64 = lock.withLock {
            nextID += 1
            return nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Error>) in
                lock.lock()
                slept.append(current.duration(to: deadline))
                if Task.isCancelled {
                    lock.unlock()
                    continuation.resume(throwing: CancellationError())
                } else if deadline <= current {
                    lock.unlock()
                    continuation.resume()
                } else {
                    sleeping[id] = Sleeper(deadline: deadline, continuation: continuation)
                    let ready = takeWatchers()
                    lock.unlock()
                    ready.forEach { $0.resume() }
                }
            }
        } onCancel: {
            let sleeper = lock.withLock { sleeping.removeValue(forKey: id) }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves the clock forward by `duration`, waking every sleeper whose deadline it reaches.
    public func advance(by duration: Duration) {
        let woken: [Sleeper] = lock.withLock {
            current = current.advanced(by: duration)
            let due = sleeping.filter { $0.value.deadline <= current }
            for id in due.keys { sleeping.removeValue(forKey: id) }
            return due.values.sorted { $0.deadline < $1.deadline }
        }
        woken.forEach { $0.continuation.resume() }
    }

    /// Returns once at least `count` tasks are asleep on this clock.
    public func sleepers(atLeast count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            lock.lock()
            if sleeping.count >= count {
                lock.unlock()
                continuation.resume()
            } else {
                watchers.append((count, continuation))
                lock.unlock()
            }
        }
    }

    /// The watchers whose count is now reached, removed; called under `lock`.
    private func takeWatchers() -> [CheckedContinuation<Void, Never>] {
        let ready = watchers.filter { $0.count <= sleeping.count }
        watchers.removeAll { $0.count <= sleeping.count }
        return ready.map(\.continuation)
    }
}
