import Foundation
import PkgKitSupport

/// Ends a transfer that has waited on the network for the idle timeout without anything
/// arriving. The reader says when it starts waiting (`waiting()`) and when something came
/// (`arrived()`); only the time in between counts, so a reader slow to take what arrived (a slow
/// disk) is never mistaken for a silent server, and the timeout counts again as soon as it waits.
///
/// The watchdog is a task of its own beside the transfer (`IdleWatchdog.run`), so nothing the
/// transfer does (a write that blocks, a body that never ends) can keep it from firing.
final class IdleWatchdog<C: Clock>: Sendable where C.Duration == Duration {
    private let clock: C
    private let idleTimeout: Duration
    /// When the reader started waiting, nil while it does not.
    private let waitingSince = LockedValue<C.Instant?>(nil)

    private init(clock: C, idleTimeout: Duration) {
        self.clock = clock
        self.idleTimeout = idleTimeout
    }

    /// The reader starts waiting for the network.
    package func waiting() {
        let now = clock.now
        waitingSince.withLock { $0 = now }
    }

    /// Something arrived (or the wait ended): the silence stops counting.
    func arrived() {
        waitingSince.withLock { $0 = nil }
    }

    /// Runs `transfer` with a watchdog beside it: returns what `transfer` returns, or throws
    /// `TransportError.timedOut(url:)` (and cancels `transfer`) once it has waited `idleTimeout`
    /// on `clock` for something to arrive. Cancelling the calling task cancels both.
    package static func run<T: Sendable>(clock: C, idleTimeout: Duration, url: String,
                                 _ transfer: @escaping @Sendable (IdleWatchdog) async throws -> T) async throws -> T {
        let watchdog = IdleWatchdog(clock: clock, idleTimeout: idleTimeout)
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await transfer(watchdog) }
            group.addTask {
                try await watchdog.watch(url: url)
                return nil
            }
            defer { group.cancelAll() }
            while let outcome = try await group.next() {
                if let value = outcome { return value }
            }
            // Both tasks ended without a value: only a cancellation does that.
            throw CancellationError()
        }
    }

    /// Sleeps until the current wait would pass the timeout, and throws when it has; returns
    /// only by throwing (the group's cancellation ends the sleep).
    private func watch(url: String) async throws {
        while true {
            // `now` first: a wait that starts after this read has a later start, so it is never
            // judged against a stale clock.
            let now = clock.now
            let since = waitingSince.current
            guard let since else {
                try await clock.sleep(until: now.advanced(by: idleTimeout), tolerance: nil)
                continue
            }
            let deadline = since.advanced(by: idleTimeout)
            if deadline <= now { throw TransportError.timedOut(url: url) }
            try await clock.sleep(until: deadline, tolerance: nil)
        }
    }
}
