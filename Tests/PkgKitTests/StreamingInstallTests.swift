import Foundation
@testable import PkgKit
import Testing
import TestSupport

/// A whole download is installed while it arrives (issue 20): files are decoded, verified and
/// staged before the last byte is in, and the version goes into place only once the package's
/// sha256 matched its catalog entry. On the scripted transport and a manual clock.
@Suite(.offThePool) struct StreamingInstallTests {
    static let id = "com.example.stream"
    static let base = URL(string: "http://cdn.test/pub/")!
    let scratch: Scratch
    let package: (pkg: String, contents: String)
    let faults = ScriptedTransport.FaultPlan()

    init() throws {
        scratch = try Scratch()
        var files: [String: Data] = [:]
        for index in 0 ..< 40 { files["part\(index).bin"] = pseudoRandomData(50_000, seed: UInt64(index + 1)) }
        package = try scratch.package("p", id: Self.id, version: "1.0", files: files, extraArguments: ["--compression", "none"])
        let report = try Publisher(destination: scratch.path("pub")).publish([package.pkg])
        try #require(report.status == .published)
    }

    var productFolder: String { scratch.documents + "/" + Self.id }

    func sync(_ transport: ScriptedTransport, progress: (@Sendable (SyncProgress) -> Void)? = nil) async throws -> ProductSyncResult {
        let client = SyncClient(catalogURL: Self.base.appendingPathComponent("catalog.json"), documents: scratch.documents, transport: transport)
        let options = SyncClient.Options(products: [Self.id], trust: .unsigned, retryPolicy: instantRetries, transferPolicy: TransferPolicy(clock: transport.clock))
        return try #require(try await client.sync(options, progress: progress).products.first)
    }

    /// The package served with a pause of a minute (on the manual clock) after `bytes`.
    func pausing(after bytes: Int) -> ScriptedTransport {
        ScriptedTransport(serving: scratch.path("pub"), base: Self.base) { request, reply in
            guard request.url.path.hasSuffix(".pkg") else { return reply }
            var paused = reply
            let body = reply.steps.reduce(into: Data()) { if case .bytes(let data) = $1 { $0.append(data) } }
            paused.steps = [.bytes(body.prefix(bytes)), .pause(.seconds(60)), .bytes(body.dropFirst(bytes))]
            return paused
        }
    }

    @Test func filesAreStagedBeforeTheLastByteArrives() async throws {
        let size = try #require(scratch.size("p.pkg"))
        let transport = pausing(after: Int(size) - 100_000)
        let staged = Signal()
        let sync = Task {
            try await self.sync(transport) { step in
                if step.filesDone >= 30 { staged.fire() }
            }
        }
        // Thirty files are staged while the download waits on its pause: nothing advances the clock.
        await staged.wait()
        #expect(!exists(productFolder + "/1.0"), "nothing goes into place before the download ends")
        #expect(transport.exchanges(for: "1.0.pkg").map(\.completed) == [false])
        await transport.clock.sleepers(atLeast: 2)
        transport.clock.advance(by: .seconds(60))
        let result = try await sync.value
        #expect(result.status == .installed)
        #expect(differences(productFolder + "/1.0", expected: snapshot(package.contents)).isEmpty)
        #expect(names(productFolder).filter { $0.hasPrefix(".") } == [".lock"], "no staging, no download left")
    }

    /// An app's progress (issue 20, item 4; issue 40, item 3): one value for the run, whose bytes
    /// count the package downloaded and read by the install, and whose files count up to the
    /// package's, never going back, ending at 1.
    @Test func progressCountsBytesDownloadedAndFilesInstalled() async throws {
        let size = try #require(scratch.size("p.pkg"))
        let steps = Steps()
        let transport = ScriptedTransport(serving: scratch.path("pub"), base: Self.base, chunkSize: 16_384)
        #expect(try await sync(transport) { steps.add($0) }.status == .installed)
        let all = steps.all
        let downloading = all.filter { $0.phase == .downloading }
        #expect(downloading.count > 10 && downloading.allSatisfy { $0.bytesTotal == 2 * size && $0.productIdentifier == Self.id },
                "\(downloading.count)")
        #expect(zip(all, all.dropFirst()).allSatisfy { $0.fraction <= $1.fraction && $0.bytesDone <= $1.bytesDone && $0.filesDone <= $1.filesDone })
        #expect(all.first?.phase == .catalog && all.last?.phase == .finished && all.last?.fraction == 1)
        #expect(all.last.map { ($0.filesDone, $0.filesTotal, $0.bytesDone) } ?? (0, 0, 0) == (40, 40, 2 * size))
        #expect(all.dropLast().allSatisfy { $0.fraction < 1 })
    }

    /// Progress steps collected from whichever thread reports them.
    final class Steps: @unchecked Sendable {
        // @unchecked: `values` is only touched under `lock`.
        private let lock = NSLock()
        private var values: [SyncProgress] = []
        func add(_ step: SyncProgress) { lock.withLock { values.append(step) } }
        var all: [SyncProgress] { lock.withLock { values } }
    }

    @Test func aPackageWhoseSHA256IsNotTheEntrysIsNeverCommitted() async throws {
        // Every file verifies against the TOC, and the TOC against tocSHA256: only the whole
        // package's sha256 (the catalog's, altered here) can refuse it, at the very end.
        let catalogPath = scratch.path("pub/catalog.json")
        var catalog = try Catalog(data: try Data(contentsOf: URL(fileURLWithPath: catalogPath)))
        catalog.products[0].versions[0].sha256 = String(repeating: "0", count: 64)
        try catalog.encoded().write(to: URL(fileURLWithPath: catalogPath))
        let transport = ScriptedTransport(serving: scratch.path("pub"), base: Self.base)
        let result = try await sync(transport)
        #expect(result.status == .refused)
        #expect(result.diagnostics.map(\.code) == [.checksumMismatch])
        #expect(!exists(productFolder), "nothing installed, nothing kept")
    }

    @Test func aTableOfContentsThatIsNotTheEntrysIsRefusedBeforeTheHeap() async throws {
        let catalogPath = scratch.path("pub/catalog.json")
        var catalog = try Catalog(data: try Data(contentsOf: URL(fileURLWithPath: catalogPath)))
        catalog.products[0].versions[0].tocSHA256 = String(repeating: "0", count: 64)
        try catalog.encoded().write(to: URL(fileURLWithPath: catalogPath))
        let transport = ScriptedTransport(serving: scratch.path("pub"), base: Self.base, chunkSize: 4096)
        let result = try await sync(transport)
        #expect(result.status == .refused)
        #expect(result.diagnostics.map(\.code) == [.checksumMismatch])
        #expect(result.diagnostics.first?.message.contains("table of contents") == true, "\(result.diagnostics)")
        let sent = try #require(transport.exchanges(for: "1.0.pkg").first)
        #expect(sent.cancelled && sent.bytesSent < 100_000, "cut off once the TOC was in: \(sent.bytesSent) bytes")
        #expect(!exists(productFolder))
    }

    @Test(.libArchive) func aZipIsDownloadedWholeThenInstalled() async throws {
        let zip = try scratch.package("z", id: "com.example.zipped", version: "1.0", files: ["a.txt": Data("zip\n".utf8)],
                                      extraArguments: ["--format", "zip"])
        let published = try Publisher(destination: scratch.path("pub")).publish([zip.pkg])
        try #require(published.status == .published, "\(published.diagnostics + published.packages.flatMap(\.diagnostics))")
        let transport = ScriptedTransport(serving: scratch.path("pub"), base: Self.base)
        let client = SyncClient(catalogURL: Self.base.appendingPathComponent("catalog.json"), documents: scratch.documents, transport: transport)
        let report = try await client.sync(SyncClient.Options(products: ["com.example.zipped"], trust: .unsigned, retryPolicy: instantRetries,
                                                               transferPolicy: TransferPolicy(clock: transport.clock)))
        #expect(report.products.map(\.status) == [.installed], "\(report.products.flatMap(\.diagnostics))")
        #expect(differences(scratch.documents + "/com.example.zipped/1.0", expected: snapshot(zip.contents)).isEmpty)
    }
}

/// A one-shot signal: `wait` returns once `fire` was called, before or after.
final class Signal: @unchecked Sendable {
    // @unchecked: every mutable field is guarded by `lock`.
    private let lock = NSLock()
    private var fired = false
    private var waiter: CheckedContinuation<Void, Never>?

    func fire() {
        let waiting: CheckedContinuation<Void, Never>? = lock.withLock {
            guard !fired else { return nil }
            fired = true
            defer { waiter = nil }
            return waiter
        }
        waiting?.resume()
    }

    func wait() async {
        await withCheckedContinuation { continuation in
            let now: Bool = lock.withLock {
                if fired { return true }
                waiter = continuation
                return false
            }
            if now { continuation.resume() }
        }
    }
}
