import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The built `pkgtool` running in the background, for tests that act on it while it works
/// (signals, kills). Its output goes to files in a scratch folder; the test waits on what the
/// process does (`waitUntil`: a file appears, bytes are written), never on the clock.
public final class BackgroundCommand: @unchecked Sendable {
    /// The process.
    public let process: Process
    private let stdoutPath: String
    private let stderrPath: String

    /// Starts `pkgtool arguments`, its stdout and stderr written to `<name>.out` and `<name>.err`
    /// in `scratch`.
    public init(_ arguments: [String], in scratch: Scratch, name: String = "background") throws {
        stdoutPath = scratch.path(name + ".out")
        stderrPath = scratch.path(name + ".err")
        process = Process()
        process.executableURL = URL(fileURLWithPath: CommandRunner.pkgtool)
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        for path in [stdoutPath, stderrPath] {
            guard FileManager.default.createFile(atPath: path, contents: nil) else { throw CocoaError(.fileWriteUnknown) }
        }
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: stdoutPath))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: stderrPath))
        try process.run()
    }

    /// True while the process runs.
    public var isRunning: Bool { process.isRunning }

    /// Sends `signal` to the process.
    public func send(_ signal: Int32) {
        kill(process.processIdentifier, signal)
    }

    /// True while one of the process's threads waits in `open` for a FIFO's other end
    /// (`wait_for_partner` in `/proc/PID/task/*/wchan`): the moment to interrupt a command that
    /// is blocked opening its input, without opening the other end (which would unblock it).
    public var isWaitingToOpenAFIFO: Bool {
        let tasks = "/proc/\(process.processIdentifier)/task"
        return names(tasks).contains { task in
            (try? String(contentsOfFile: "\(tasks)/\(task)/wchan", encoding: .utf8)) == "wait_for_partner"
        }
    }

    /// How many bytes the process has written so far (`wchar` in `/proc/PID/io`: every `write`,
    /// to any file), or nil once it is gone.
    public var bytesWritten: Int64? { ioCounter("wchar") }

    /// How many bytes the process has read so far (`rchar`), or nil once it is gone.
    public var bytesRead: Int64? { ioCounter("rchar") }

    private func ioCounter(_ name: String) -> Int64? {
        guard let text = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/io", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(name + ":") {
            return Int64(line.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces))
        }
        return nil
    }

    /// Waits for the process to end (killing it after `seconds`); returns its status and output. `status` is the exit status,
    /// or the signal's number when a signal ended it (`killedBySignal`).
    @discardableResult
    public func finish(within seconds: Double = 60) -> (result: CommandResult, killedBySignal: Bool) {
        // A command that does not end is a failure to report, not a test run that never ends.
        if !waitUntil(seconds: seconds, { !process.isRunning }) { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        let out = (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? ""
        let err = (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? ""
        return (CommandResult(status: process.terminationStatus, stdout: out, stderr: err),
                process.terminationReason == .uncaughtSignal)
    }
}

/// Waits until `condition` holds, looking again every millisecond, for at most `seconds`;
/// returns whether it holds. What tests wait on instead of sleeping for a guessed time.
@discardableResult
public func waitUntil(seconds: Double = 180, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while !condition() {
        guard Date() < deadline else { return false }
        usleep(1_000)
    }
    return true
}
