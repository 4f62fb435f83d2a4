import Foundation

/// Runs the built `pkgtool` binary (and other tools) and captures what they print.
struct CommandResult {
    var status: Int32
    var stdout: String
    var stderr: String

    /// stdout parsed as one JSON object.
    var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(stdout.utf8))) as? [String: Any] ?? [:]
    }
}

enum CommandRunner {
    /// The package root, found from this file's path.
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The debug binary `make test` builds before running the tests.
    static var pkgtool: String {
        ProcessInfo.processInfo.environment["PKGTOOL_BIN"] ?? packageRoot.appendingPathComponent(".build/debug/pkgtool").path
    }

    /// Runs `pkgtool` with `arguments` in `directory`.
    @discardableResult
    static func pkgtool(_ arguments: [String], in directory: URL? = nil, environment: [String: String] = [:]) throws -> CommandResult {
        try run(pkgtool, arguments, in: directory, environment: environment)
    }

    /// Runs any program.
    @discardableResult
    static func run(_ program: String, _ arguments: [String], in directory: URL? = nil, environment: [String: String] = [:]) throws -> CommandResult {
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
        var outData = Data(), errData = Data()
        let group = DispatchGroup()
        group.enter()
        DispatchQueue.global().async { errData = err.fileHandleForReading.readDataToEndOfFile(); group.leave() }
        outData = out.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        return CommandResult(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self), stderr: String(decoding: errData, as: UTF8.self))
    }

    /// Runs a shell command line (for bsdtar pipelines), failing the test's setup when it fails.
    @discardableResult
    static func shell(_ command: String, in directory: URL? = nil) throws -> CommandResult {
        let result = try run("/bin/sh", ["-c", command], in: directory)
        if result.status != 0 { throw ShellError(command: command, stderr: result.stderr) }
        return result
    }

    struct ShellError: Error, CustomStringConvertible {
        var command: String
        var stderr: String
        var description: String { "`\(command)` failed: \(stderr)" }
    }
}

/// A scratch folder removed when the test ends.
final class Scratch {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("pkgtool-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    /// A path inside the scratch folder.
    func path(_ relative: String) -> String { url.appendingPathComponent(relative).path }

    /// Writes a file (and its folders).
    @discardableResult
    func write(_ relative: String, _ contents: String, mode: Int = 0o644) throws -> String {
        try write(relative, Data(contents.utf8), mode: mode)
    }

    @discardableResult
    func write(_ relative: String, _ contents: Data, mode: Int = 0o644) throws -> String {
        let file = url.appendingPathComponent(relative)
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try contents.write(to: file)
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: file.path)
        return file.path
    }

    /// A package source folder: ContentInfo.plist + Contents/ with the given files.
    @discardableResult
    func content(_ folder: String, id: String = "com.example.test", version: String = "1.0", files: [String: String] = ["a.txt": "hello\n"]) throws -> String {
        try write("\(folder)/ContentInfo.plist", plist(id: id, version: version))
        for (name, text) in files { try write("\(folder)/Contents/\(name)", text) }
        return path(folder)
    }

    /// The bytes of a file.
    func read(_ relative: String) throws -> Data { try Data(contentsOf: url.appendingPathComponent(relative)) }
}

/// An XML ContentInfo.plist.
func plist(id: String, version: String, extra: String = "") -> String {
    """
    <?xml version="1.0" encoding="UTF-8"?>
    <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
    <plist version="1.0">
    <dict>
    \t<key>ContentVersion</key>
    \t<string>\(version)</string>
    \t<key>IAPProductIdentifier</key>
    \t<string>\(id)</string>\(extra)
    </dict>
    </plist>

    """
}

/// The codes of the diagnostics in a JSON result.
func codes(_ json: [String: Any]) -> Set<String> {
    var found: Set<String> = []
    for diagnostic in json["diagnostics"] as? [[String: Any]] ?? [] { if let code = diagnostic["code"] as? String { found.insert(code) } }
    for package in json["packages"] as? [[String: Any]] ?? [] { found.formUnion(codes(package)) }
    return found
}
