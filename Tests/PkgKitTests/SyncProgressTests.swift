import Foundation
@testable import PkgKit
import Testing
import TestSupport

/// One progress value for a whole sync run, as an app's UI reads it (issue 40, item 3): an
/// `AsyncSequence` read on the main actor through the model the docs show (compiled here, the
/// example's own file), and a callback; the bytes and files of every product of the run, a
/// fraction that never goes back and ends at 1; cancel and resume; folders as URLs.
@Suite struct SyncProgressTests {
    static let base = URL(string: "http://cdn.test/pub/")!
    static let first = "com.example.progress.one", second = "com.example.progress.two"
    let scratch: Scratch

    init() throws {
        scratch = try Scratch()
        for (index, id) in [Self.first, Self.second].enumerated() {
            var files: [String: Data] = [:]
            for file in 0 ..< 12 { files["f\(file).bin"] = pseudoRandomData(30_000, seed: UInt64(100 * index + file + 1)) }
            let package = try scratch.package("p\(index)", id: id, version: "1.0", files: files, extraArguments: ["--compression", "none"])
            let report = try Publisher(destination: scratch.path("pub")).publish([package.pkg])
            try #require(report.status == .published)
        }
    }

    var catalogFile: URL { URL(fileURLWithPath: scratch.path("pub/catalog.json")) }
    var documents: URL { URL(fileURLWithPath: scratch.documents, isDirectory: true) }

    func size(_ index: Int) throws -> Int64 { try #require(scratch.size("p\(index).pkg")) }

    /// The docs' main-actor pattern: `ContentLibrary` (the example app's file, which
    /// `Tests/PkgKitTests/ContentLibrary.swift` links to) reads the run's sequence on the main actor; every value it sees is in order,
    /// never back, and the last is the finished run with every file written.
    @MainActor @Test func theDocumentedModelShowsTheRunInOrderOnTheMainActor() async throws {
        let library = ContentLibrary(catalogURL: catalogFile, folder: documents, trust: .unsigned)
        var seen: [SyncProgress] = []
        library.onProgress = { step in
            MainActor.assertIsolated()
            seen.append(step)
        }
        await library.update([Self.first, Self.second])
        let report = try #require(library.report)
        #expect(report.products.map(\.status) == [.installed, .installed])
        #expect(library.folder(of: Self.second) == documents.appendingPathComponent(Self.second + "/1.0", isDirectory: true))
        #expect(!seen.isEmpty)
        #expect(zip(seen, seen.dropFirst()).allSatisfy { $0.fraction <= $1.fraction && $0.bytesDone <= $1.bytesDone && $0.filesDone <= $1.filesDone },
                "\(seen.map(\.fraction))")
        let last = try #require(library.progress)
        #expect(last == seen.last && last.phase == .finished && last.fraction == 1)
        #expect(last.filesDone == 24 && last.filesTotal == 24)
        #expect(try last.bytesDone == 2 * (size(0) + size(1)) && last.bytesDone == last.bytesTotal)
    }

    /// The docs show the model as the example app has it: the article's code is the file's.
    @Test func theArticleShowsTheExamplesModel() throws {
        let root = CommandRunner.packageRoot
        let example = try String(contentsOf: root.appendingPathComponent("Examples/pkgkit-example/ContentLibrary.swift"), encoding: .utf8)
        let copy = try String(contentsOf: root.appendingPathComponent("Tests/PkgKitTests/ContentLibrary.swift"), encoding: .utf8)
        let article = try String(contentsOf: root.appendingPathComponent("Sources/PkgKit/PkgKit.docc/SyncingContent.md"), encoding: .utf8)
        #expect(copy == example, "Tests/PkgKitTests/ContentLibrary.swift is a link to the example's file")
        let model = String(try #require(example.range(of: "@available(iOS 17").map { example[$0.lowerBound...] }))
        #expect(article.contains(model), "SyncingContent.md shows ContentLibrary as Examples/pkgkit-example has it")
    }

    /// The callback gets the same values: totals that count both products from the first
    /// download on (estimated from the catalog before either is touched), a fraction below 1
    /// until the run's last value.
    @Test func theTotalsCountEveryProductFromTheStart() async throws {
        let steps = Steps()
        let client = SyncClient(catalogURL: catalogFile, documents: documents)
        let report = try await client.sync(SyncClient.Options(products: [Self.first, Self.second], trust: .unsigned)) { steps.add($0) }
        #expect(report.products.map(\.status) == [.installed, .installed])
        let all = steps.all, whole = try 2 * (size(0) + size(1))
        #expect(all.first?.phase == .catalog)
        let working = all.filter { $0.phase == .downloading || $0.phase == .installing }
        #expect(!working.isEmpty && working.allSatisfy { $0.bytesTotal == whole && $0.filesTotal == 24 })
        #expect(Set(working.compactMap(\.productIdentifier)) == [Self.first, Self.second])
        #expect(all.dropLast().allSatisfy { $0.fraction < 1 } && all.last?.fraction == 1 && all.last?.phase == .finished)
    }

    /// A delta counts what it downloads, not the package: its total shrinks once its ranges are
    /// planned, and the fraction still only rises, to 1.
    @Test func aDeltaCountsItsRangesNotThePackage() async throws {
        let client = SyncClient(catalogURL: catalogFile, documents: documents)
        let options = SyncClient.Options(products: [Self.first], trust: .unsigned)
        _ = try await client.sync(options)
        var files: [String: Data] = [:]
        for file in 0 ..< 12 { files["f\(file).bin"] = pseudoRandomData(30_000, seed: UInt64(file + 1)) }
        files["f0.bin"] = pseudoRandomData(30_000, seed: 999)
        let update = try scratch.package("p0-1.1", id: Self.first, version: "1.1", files: files, extraArguments: ["--compression", "none"])
        try #require(try Publisher(destination: scratch.path("pub")).publish([update.pkg]).status == .published)
        let packageSize = try #require(scratch.size("p0-1.1.pkg"))

        let steps = Steps()
        let result = try #require(try await client.sync(options) { steps.add($0) }.products.first)
        #expect(result.status == .installed && result.delta && result.contentVersion == "1.1")
        let all = steps.all
        #expect(zip(all, all.dropFirst()).allSatisfy { $0.fraction <= $1.fraction && $0.bytesDone <= $1.bytesDone })
        let last = try #require(all.last)
        #expect(last.phase == .finished && last.fraction == 1 && last.filesDone == 12 && last.filesTotal == 12)
        #expect(last.bytesTotal < 2 * packageSize && last.bytesTotal > packageSize, "the ranges and the install's read: \(last.bytesTotal) of \(packageSize)")
    }

    /// A run with nothing to do ends at 1 too, with nothing counted.
    @Test func aRunWithNothingToDoFinishesAtOne() async throws {
        let client = SyncClient(catalogURL: catalogFile, documents: documents)
        _ = try await client.sync(SyncClient.Options(products: [Self.first], trust: .unsigned))
        let run = client.startSync(SyncClient.Options(products: [Self.first], trust: .unsigned))
        var values: [SyncProgress] = []
        for await step in run.progress { values.append(step) }
        #expect(try await run.report.products.map(\.status) == [.unchanged])
        #expect(values.last == SyncProgress(phase: .finished, productIdentifier: nil, fraction: 1))
    }

    /// Cancelling a run mid-download ends its sequence without a finished value, throws from
    /// its report, and keeps the download, which the next run resumes: it downloads less than
    /// the package.
    @Test(.offThePool) func aCancelledRunResumes() async throws {
        let size = try size(0)
        // The first request for the package pauses after 100,000 bytes, on a clock nothing advances.
        let transport = ScriptedTransport(serving: scratch.path("pub"), base: Self.base, chunkSize: 8_192) { request, reply in
            guard request.url.path.hasSuffix(".pkg"), request.range == nil else { return reply }
            var paused = reply
            let body = reply.steps.reduce(into: Data()) { if case .bytes(let data) = $1 { $0.append(data) } }
            paused.steps = [.bytes(body.prefix(100_000)), .pause(.seconds(60)), .bytes(body.dropFirst(100_000))]
            return paused
        }
        let client = SyncClient(catalogURL: Self.base.appendingPathComponent("catalog.json"), documents: documents, transport: transport)
        let options = SyncClient.Options(products: [Self.first], trust: .unsigned, retryPolicy: instantRetries,
                                         transferPolicy: TransferPolicy(clock: transport.clock))
        let run = client.startSync(options)
        let values = Task {
            var all: [SyncProgress] = []
            for await step in run.progress { all.append(step) }
            return all
        }
        let part = "Documents/\(Self.first)/.download-1.0.part", scratch = scratch
        let paused = await offThePool { waitUntil(seconds: 60) { scratch.size(part) == 100_000 } }
        let requests = transport.exchanges.map { "\($0.request.url.lastPathComponent) range \(String(describing: $0.request.range)): \($0.bytesSent) bytes" }
        try #require(paused, "the download never reached the pause: .part of \(String(describing: scratch.size(part))) bytes after \(requests)")
        run.cancel()
        await #expect(throws: OperationCancelled.self) { try await run.report }
        let seen = await values.value
        #expect(!seen.isEmpty && seen.allSatisfy { $0.phase != .finished && $0.fraction < 1 })
        #expect(scratch.size(part) == 100_000, "the download is kept")

        let resumed = try await client.sync(options)
        let product = try #require(resumed.products.first)
        #expect(product.status == .installed && product.resumedFrom == 100_000)
        #expect(product.bytesDownloaded == size - 100_000)
    }

    /// Folders and packages as file URLs: the URL initializers install where the String ones do.
    @Test func foldersAreFileURLs() async throws {
        let client = SyncClient(catalogURL: catalogFile, documents: documents)
        #expect(client.documents == scratch.documents && client.documentsURL.standardizedFileURL == documents.standardizedFileURL)
        let report = try await client.sync(SyncClient.Options(products: [Self.first], trust: .unsigned))
        let installed = try #require(report.products.first?.installedURL)
        #expect(installed == documents.appendingPathComponent(Self.first + "/1.0", isDirectory: true))
        #expect(FileManager.default.fileExists(atPath: installed.appendingPathComponent("f0.bin").path))

        let elsewhere = URL(fileURLWithPath: scratch.path("Other"), isDirectory: true)
        let installer = Installer(documents: elsewhere)
        let extracted = try installer.install(URL(fileURLWithPath: scratch.path("p1.pkg")))
        #expect(extracted.status == .installed)
        #expect(try installer.currentVersion(productIdentifier: Self.second) == "1.0")
        #expect(installer.productURL(Self.second) == elsewhere.appendingPathComponent(Self.second, isDirectory: true))
        #expect(FileManager.default.fileExists(atPath: scratch.path("Other/\(Self.second)/1.0/f0.bin")))
    }

    /// Values collected from whichever thread reports them.
    final class Steps: @unchecked Sendable {
        // @unchecked: `values` is only touched under `lock`.
        private let lock = NSLock()
        private var values: [SyncProgress] = []
        func add(_ step: SyncProgress) { lock.withLock { values.append(step) } }
        var all: [SyncProgress] { lock.withLock { values } }
    }
}
