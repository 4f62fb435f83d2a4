import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One child process the soak runs and may signal: its output goes to files (no pipe to drain),
/// every wait has a deadline, and the moment it ended is noted when it ends.
final class SoakChild: @unchecked Sendable {
    // Unchecked: `endedAt` is written by the termination handler and read under `lock`.
    private let process = Process()
    private let ended = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var endedAt: Date?
    private var reaped = false
    /// When it was started.
    private(set) var startedAt = Date()

    /// Starts `program` in `directory` with `environment` added to the soak's own, stdout and
    /// stderr written to the files `output` and `errors`.
    init(_ program: String, _ arguments: [String], directory: String, environment: [String: String],
         output: String, errors: String) throws {
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        for file in [output, errors] { _ = FileManager.default.createFile(atPath: file, contents: nil) }
        let out = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        let err = try FileHandle(forWritingTo: URL(fileURLWithPath: errors))
        // The child has its own copies once it runs.
        defer {
            try? out.close()
            try? err.close()
        }
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        process.terminationHandler = { [lock, ended] _ in
            lock.withLock { if self.endedAt == nil { self.endedAt = Date() } }
            ended.signal()
        }
        try process.run()
        startedAt = Date()
    }

    /// Waits until the child ends or `deadline` comes; true when it has ended.
    func wait(until deadline: Date) -> Bool {
        if lock.withLock({ reaped }) { return true }
        let nanoseconds = max(0, deadline.timeIntervalSinceNow) * 1e9
        guard ended.wait(timeout: .now() + .nanoseconds(Int(nanoseconds))) == .success else { return false }
        lock.withLock { reaped = true }
        // The handler has run, so `Process` has the status.
        process.terminationHandler = nil
        return true
    }

    /// Sends `signal`, unless the child has already ended.
    func send(_ signal: Int32) {
        guard !lock.withLock({ reaped || endedAt != nil }) else { return }
        kill(process.processIdentifier, signal)
    }

    /// Seconds from start to end (once ended).
    var duration: TimeInterval { (lock.withLock { endedAt } ?? Date()).timeIntervalSince(startedAt) }

    /// When it ended (once ended).
    var end: Date { lock.withLock { endedAt } ?? Date() }

    /// The exit status, or minus the signal that ended it (-9 for SIGKILL); only once ended.
    var status: Int32 {
        process.terminationReason == .uncaughtSignal ? -process.terminationStatus : process.terminationStatus
    }
}
