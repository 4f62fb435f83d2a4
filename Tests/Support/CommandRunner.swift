import Foundation

/// Runs the built `pkgtool` binary (and other tools) and captures what they print.
public struct CommandResult: Sendable {
    /// The exit status (or the signal number, when killed).
    public var status: Int32
    /// Everything printed on stdout.
    public var stdout: String
    /// Everything printed on stderr.
    public var stderr: String

    /// stdout parsed as one JSON object.
    public var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(stdout.utf8))) as? [String: Any] ?? [:]
    }
}

public enum CommandRunner {
    /// The package root, found from this file's path.
    public static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The debug binary `make test` builds before running the tests.
    public static var pkgtool: String {
        ProcessInfo.processInfo.environment["PKGTOOL_BIN"] ?? packageRoot.appendingPathComponent(".build/debug/pkgtool").path
    }

    /// Runs `pkgtool` with `arguments` in `directory`.
    @discardableResult
    public static func pkgtool(_ arguments: [String], in directory: URL? = nil, environment: [String: String] = [:],
                               deadline: Duration = defaultDeadline) throws -> CommandResult {
        try run(pkgtool, arguments, in: directory, environment: environment, deadline: deadline)
    }

    /// `pkgtool` for async tests: the child is waited for on a Dispatch thread rather than on one
    /// of the few threads Swift concurrency runs every test on, so that end-to-end tests do not
    /// starve the in-process tests that have time limits.
    @discardableResult
    public static func pkgtool(_ arguments: [String], in directory: URL? = nil, environment: [String: String] = [:],
                               deadline: Duration = defaultDeadline) async throws -> CommandResult {
        try await offThePool { try pkgtool(arguments, in: directory, environment: environment, deadline: deadline) }
    }

    /// `shell` for async tests, waited for off the concurrency pool as `pkgtool` is.
    @discardableResult
    public static func shell(_ command: String, in directory: URL? = nil) async throws -> CommandResult {
        try await offThePool { try shell(command, in: directory) }
    }

    /// Runs `body`, which blocks for as long as its command runs, on a thread of its own
    /// (`offThePool`). Not on a Dispatch queue: on Linux, Swift's global executor runs its jobs on
    /// Dispatch's default-priority workers, and once commands blocked enough of them every async
    /// test beside them stalled (a sync test waited 60 s for its first package request).
    private static func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await TestSupport.offThePool(body)
    }

    /// How long a command may run before its process group is killed: long enough for the
    /// slowest end-to-end command on a loaded machine, short enough that a hung one fails the
    /// test rather than `make test`.
    public static let defaultDeadline: Duration = .seconds(90)

    /// Runs any program, in a process group of its own; past `deadline` the group is killed and
    /// ``TimedOut`` thrown, naming the command.
    @discardableResult
    public static func run(_ program: String, _ arguments: [String], in directory: URL? = nil, environment: [String: String] = [:],
                           deadline: Duration = defaultDeadline) throws -> CommandResult {
        var env = ProcessInfo.processInfo.environment
        env.merge(environment) { _, new in new }
        let child = try GroupedChild(program, arguments, in: directory?.path, environment: env)
        let (status, out, err) = child.wait(deadline: deadline)
        guard let status else {
            throw TimedOut(command: ([program] + arguments).joined(separator: " "), deadline: deadline,
                           stderr: String(decoding: err, as: UTF8.self))
        }
        return CommandResult(status: status, stdout: String(decoding: out, as: UTF8.self), stderr: String(decoding: err, as: UTF8.self))
    }

    /// A command that was still running at its deadline, and was killed with its process group.
    public struct TimedOut: Error, CustomStringConvertible {
        /// The command line.
        public var command: String
        /// How long it was given.
        public var deadline: Duration
        /// What it printed on stderr before it was killed.
        public var stderr: String
        /// The command, its deadline, and what it printed on stderr.
        public var description: String { "`\(command)` still ran after \(deadline); killed its process group. stderr: \(stderr)" }
    }

    /// Runs a shell command line (for bsdtar pipelines), failing the test's setup when it fails.
    @discardableResult
    public static func shell(_ command: String, in directory: URL? = nil) throws -> CommandResult {
        let result = try run("/bin/sh", ["-c", command], in: directory)
        if result.status != 0 { throw ShellError(command: command, stderr: result.stderr) }
        return result
    }

    /// A command that failed during a test's setup.
    public struct ShellError: Error, CustomStringConvertible {
        public var command: String
        public var stderr: String
        public init(command: String, stderr: String) {
            self.command = command
            self.stderr = stderr
        }
        public var description: String { "`\(command)` failed: \(stderr)" }
    }
}

