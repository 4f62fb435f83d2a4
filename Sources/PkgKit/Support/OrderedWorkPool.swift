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
    // Unchecked: every stored property is read and written only under `condition`.
    private final class State<Result: Sendable>: @unchecked Sendable {
        private let condition = NSCondition()
        private let count: Int
        private let window: Int
        private var next = 0
        private var consumed = 0
        private var cancelled = false
        private var results: [Int: Swift.Result<Result, Error>] = [:]

        init(count: Int, window: Int) {
            self.count = count
            self.window = max(1, window)
        }

        /// The next index to work on, or nil when there is none (or the run was cancelled).
        func take() -> Int? {
            condition.lock()
            defer { condition.unlock() }
            // Wait for room in the window so that a slow early item cannot let later ones pile up.
            while !cancelled && next < count && next - consumed >= window { condition.wait() }
            guard !cancelled && next < count else { return nil }
            next += 1
            return next - 1
        }

        func finish(_ index: Int, _ result: Swift.Result<Result, Error>) {
            condition.lock()
            results[index] = result
            condition.broadcast()
            condition.unlock()
        }

        /// Waits for item `index` and frees its place in the window.
        func result(_ index: Int) -> Swift.Result<Result, Error> {
            condition.lock()
            defer { condition.unlock() }
            while results[index] == nil { condition.wait() }
            consumed = index + 1
            condition.broadcast()
            return results.removeValue(forKey: index)!
        }

        func cancel() {
            condition.lock()
            cancelled = true
            condition.broadcast()
            condition.unlock()
        }
    }
}
