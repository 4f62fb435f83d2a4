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
    public static func pkgtool(_ arguments: [String], in directory: URL? = nil, environment: [String: String] = [:]) throws -> CommandResult {
        try run(pkgtool, arguments, in: directory, environment: environment)
    }

    /// `pkgtool` for async tests: the child is waited for on a Dispatch thread rather than on one
    /// of the few threads Swift concurrency runs every test on, so that end-to-end tests do not
    /// starve the in-process tests that have time limits.
    @discardableResult
    public static func pkgtool(_ arguments: [String], in directory: URL? = nil, environment: [String: String] = [:]) async throws -> CommandResult {
        try await offThePool { try pkgtool(arguments, in: directory, environment: environment) }
    }

    /// `shell` for async tests, waited for off the concurrency pool as `pkgtool` is.
    @discardableResult
    public static func shell(_ command: String, in directory: URL? = nil) async throws -> CommandResult {
        try await offThePool { try shell(command, in: directory) }
    }

    /// Runs `body`, which blocks, on a Dispatch thread.
    private static func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(with: Result { try body() }) }
        }
    }

    /// Runs any program.
    @discardableResult
    public static func run(_ program: String, _ arguments: [String], in directory: URL? = nil, environment: [String: String] = [:]) throws -> CommandResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        var env = ProcessInfo.processInfo.environment
        env.merge(environment) { _, new in new }
        process.environment = env
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Read both pipes fully before waiting, so a chatty child cannot block on a full pipe.
        let errData = CollectedOutput()
        let group = DispatchGroup()
        group.enter()
        DispatchQueue.global().async { errData.data = err.fileHandleForReading.readDataToEndOfFile(); group.leave() }
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        return CommandResult(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self), stderr: String(decoding: errData.data, as: UTF8.self))
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


/// What one thread read from a pipe, handed to another.
// Unchecked: written once by the reading thread before `group.leave()`, read only after `group.wait()`.
private final class CollectedOutput: @unchecked Sendable {
    var data = Data()
}
