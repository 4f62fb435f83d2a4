import Foundation

/// Runs `work` on items 0..<count with up to `jobs` threads, and hands the results to `consume`
/// strictly in index order on the calling thread. At most `window` items are taken ahead of the
/// one being consumed, which bounds memory whatever the number of items, and makes the output
/// independent of thread timing.
package enum OrderedWorkPool {
    package static func run<Result: Sendable>(count: Int, jobs: Int, window: Int,
                            work: @escaping @Sendable (Int) throws -> Result,
                            consume: (Int, Result) throws -> Void) throws {
        guard count > 0 else { return }
        if jobs <= 1 {
            for index in 0..<count { try consume(index, try work(index)) }
            return
        }
        let state = State<Result>(count: count, window: window)
        let group = DispatchGroup()
        for _ in 0..<min(jobs, count) {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                while let index = state.take() {
                    state.finish(index, Swift.Result { try work(index) })
                }
            }
        }
        defer {
            state.cancel()
            group.wait()
        }
        for index in 0..<count {
            try consume(index, try state.result(index).get())
        }
    }

    /// The shared bookkeeping, behind one lock.
    private final class State<Result: Sendable>: Sendable {
        /// Where the workers and the consumer are.
        private struct Progress {
            /// The next index to hand to a worker.
            var next = 0
            /// How many results the consumer has taken.
            var consumed = 0
            /// True once the run is over, early or not.
            var cancelled = false
            /// Results not yet taken, by index.
            var results: [Int: Swift.Result<Result, any Error>] = [:]
        }
        private let progress = ConditionLockedValue(Progress())
        private let count: Int
        private let window: Int

        init(count: Int, window: Int) {
            self.count = count
            self.window = max(1, window)
        }

        /// The next index to work on, or nil when there is none (or the run was cancelled).
        func take() -> Int? {
            let (count, window) = (count, window)
            // Wait for room in the window so that a slow early item cannot let later ones pile up.
            return progress.withLock(waitingUntil: { $0.cancelled || $0.next >= count || $0.next - $0.consumed < window }) { progress in
                guard !progress.cancelled && progress.next < count else { return nil }
                progress.next += 1
                return progress.next - 1
            }
        }

        func finish(_ index: Int, _ result: Swift.Result<Result, any Error>) {
            progress.withLock(thenWake: .all) { $0.results[index] = result }
        }

        /// Waits for item `index` and frees its place in the window.
        func result(_ index: Int) -> Swift.Result<Result, any Error> {
            progress.withLock(waitingUntil: { $0.results[index] != nil }, thenWake: .all) { progress in
                progress.consumed = index + 1
                return progress.results.removeValue(forKey: index)!
            }
        }

        func cancel() {
            progress.withLock(thenWake: .all) { $0.cancelled = true }
        }
    }
}
