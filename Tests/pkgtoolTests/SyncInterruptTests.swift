import Foundation
import Testing
import TestSupport

/// SIGINT and SIGTERM end `pkgtool sync` within 2 seconds in every state it can wait in, with
/// 130 / 143, the previous version current and a `.part` the next run resumes (SPEC section 7).
/// Each signal is sent once the sync is known to be in the state (a request arrived, the `.part`
/// holds bytes), never after a delay.
@Suite(.offThePool, .timeLimit(.minutes(2))) struct SyncInterruptTests {
    static let id = "com.example.stop"
    let scratch: Scratch
    let v10: (pkg: String, contents: String)
    let v11: (pkg: String, contents: String)
    let published: String

    init() throws {
        scratch = try Scratch()
        v10 = try scratch.package("v10", id: Self.id, version: "1.0", files: ["a.bin": pseudoRandomData(300_000, seed: 1)])
        v11 = try scratch.package("v11", id: Self.id, version: "1.1", files: ["a.bin": pseudoRandomData(300_000, seed: 2)])
        published = scratch.path("pub")
        for package in [v10.pkg] {
            let result = try CommandRunner.pkgtool(["publish", package, "--to", published])
            try #require(result.status == 0, "\(result.stderr)")
        }
    }

    var productFolder: String { scratch.documents + "/" + Self.id }

    /// Starts `pkgtool sync SOURCE --product ID` in the background, its output to a log.
    func start(_ source: String, _ extra: [String] = []) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandRunner.pkgtool)
        process.arguments = ["sync", source, "--documents", scratch.documents, "--product", Self.id] + extra
        let log = scratch.path("sync.log")
        try #require(FileManager.default.createFile(atPath: log, contents: nil))
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// Sends `signal` and returns how long the process took to end after it.
    func stop(_ process: Process, with signal: Int32) -> Double {
        let sent = Date()
        kill(process.processIdentifier, signal)
        process.waitUntilExit()
        return Date().timeIntervalSince(sent)
    }

    /// Blocks until the file at `path` (relative to the scratch folder) holds at least `bytes`
    /// (or the process ends).
    func wait(until path: String, holds bytes: Int64, while process: Process) {
        while (scratch.size(path) ?? 0) < bytes && process.isRunning { usleep(2_000) }
    }

    func expectStopped(_ process: Process, by signal: Int32, within seconds: Double, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(process.terminationReason == .exit && process.terminationStatus == 128 + signal,
                "\(scratch.text("sync.log") ?? "")", sourceLocation: sourceLocation)
        #expect(seconds < 2, "it took \(seconds) s to stop", sourceLocation: sourceLocation)
    }

    @Test(arguments: [SIGTERM, SIGINT])
    func whileTheCatalogNeverComes(signal: Int32) async throws {
        let server = try SilentServer()
        defer { server.stop() }
        let process = try start(server.url("catalog.json").absoluteString)
        await offThePool { server.requests(atLeast: 1) }
        expectStopped(process, by: signal, within: await offThePool { stop(process, with: signal) })
        #expect(!FileManager.default.fileExists(atPath: productFolder))
        let log = scratch.text("sync.log") ?? ""
        #expect(log.contains("sync: interrupted; nothing was installed (a download in progress resumes next time)"),
                "a first install has no previous version to stay current: \(log)")
    }

    /// The package arrives and is installed at once: when it stalls mid-body, its first file is
    /// being staged. The signal comes once the staging folder is there, and takes it away.
    @Test(arguments: [SIGTERM, SIGINT])
    func whileAPackageStallsMidBodyAndIsBeingInstalled(signal: Int32) async throws {
        try #require(await CommandRunner.pkgtool(["extract", v10.pkg, "--documents", scratch.documents]).status == 0)
        let result = try await CommandRunner.pkgtool(["publish", v11.pkg, "--to", published])
        try #require(result.status == 0, "\(result.stderr)")
        let server = try FaultHTTPServer(root: published)
        defer { server.stop() }
        server.always("\(Self.id)/1.1.pkg", .stallAfter(bytes: 120_000))
        let process = try start(server.url("catalog.json").absoluteString, ["--no-delta"])
        let part = "Documents/\(Self.id)/.download-1.1.part"
        await offThePool { [self] in wait(until: part, holds: 120_000, while: process) }
        let staging: @Sendable () -> [String] = { [productFolder] in names(productFolder).filter { $0.hasPrefix(".staging-") } }
        await offThePool { while staging().isEmpty && process.isRunning { usleep(2_000) } }
        #expect(!staging().isEmpty, "installing when the signal comes")
        expectStopped(process, by: signal, within: await offThePool { stop(process, with: signal) })
        #expect(staging().isEmpty, "the staging folder is removed")
        #expect(readRecord(productFolder)?.version == "1.0", "the previous version stays current")
        #expect(differences(productFolder + "/1.0", expected: snapshot(v10.contents)).isEmpty)
        #expect((scratch.size(part) ?? 0) >= 120_000, "the download is kept to resume")

        // The next run resumes it.
        server.always("\(Self.id)/1.1.pkg", nil)
        let again = try await CommandRunner.pkgtool(["sync", server.url("catalog.json").absoluteString, "--documents", scratch.documents,
                                                     "--product", Self.id, "--no-delta"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout.contains("resumed at"), "\(again.stdout)")
        #expect(differences(productFolder + "/1.1", expected: snapshot(v11.contents)).isEmpty)
    }

    @Test func whileAnotherSyncHoldsTheProduct() async throws {
        try #require(await CommandRunner.pkgtool(["extract", v10.pkg, "--documents", scratch.documents]).status == 0)
        let result = try await CommandRunner.pkgtool(["publish", v11.pkg, "--to", published])
        try #require(result.status == 0, "\(result.stderr)")
        // The product's lock, held the way another pkgtool holds it.
        let lock = open(productFolder + "/.lock", O_RDWR | O_CREAT, 0o644)
        try #require(lock >= 0 && flock(lock, LOCK_EX) == 0)
        defer { close(lock) }
        let server = try FaultHTTPServer(root: published)
        defer { server.stop() }
        let process = try start(server.url("catalog.json").absoluteString)
        // Waiting for the lock comes right after the catalog and its signature lookup.
        await offThePool { while server.log(for: "catalog.json").isEmpty && process.isRunning { usleep(2_000) } }
        expectStopped(process, by: SIGTERM, within: await offThePool { stop(process, with: SIGTERM) })
        #expect(readRecord(productFolder)?.version == "1.0")
    }
}
