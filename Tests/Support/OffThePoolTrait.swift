import Foundation
import Testing

/// Runs each test of a suite on a thread of its own (a task executor preference), not on Swift's
/// cooperative threads, which are as many as cores: `@Suite(.offThePool)`. End-to-end tests block
/// their thread on child processes for seconds at a time, and two of them on the two cooperative
/// threads would starve every async test beside them, past their time limits.
public struct OffThePoolTrait: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        // Applied once per test function, not again around the whole suite.
        guard !test.isSuite else { return try await function() }
        let executor = ThreadExecutor()
        defer { executor.stop() }
        try await withTaskExecutorPreference(executor) { try await function() }
    }
}

extension Trait where Self == OffThePoolTrait {
    /// Each test on a thread of its own.
    public static var offThePool: Self { OffThePoolTrait() }
}

/// A task executor with one thread of its own, running the jobs given to it in order.
final class ThreadExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked: `jobs` and `stopped` are only touched under `condition`.
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var stopped = false

    init() {
        let thread = Thread { [self] in run() }
        thread.stackSize = 8 << 20
        thread.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        condition.withLock {
            jobs.append(unowned)
            condition.signal()
        }
    }

    /// Ends the thread once the jobs given so far have run.
    func stop() {
        condition.withLock {
            stopped = true
            condition.signal()
        }
    }

    private func run() {
        while true {
            let job: UnownedJob? = condition.withLock {
                while jobs.isEmpty && !stopped { condition.wait() }
                return jobs.isEmpty ? nil : jobs.removeFirst()
            }
            guard let job else { return }
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
