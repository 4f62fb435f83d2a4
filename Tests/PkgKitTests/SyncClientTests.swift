import Foundation
@testable import PkgKit
import Testing
import TestSupport

/// The library's sync and check against a scripted server (in memory, on a manual clock): plans
/// carried out, deltas, resumes, cut-offs, retries, cancellation and what a check reports, with
/// no socket and no sleep. The real transports are tested on their own (`HTTPTransportSocketTests`).
@Suite(.offThePool) struct SyncClientTests {
    static let id = "com.example.client"
    static let base = URL(string: "http://cdn.test/pub/")!
    let scratch: Scratch
    let v10: (pkg: String, contents: String)
    let v11: (pkg: String, contents: String)
    let faults = ScriptedTransport.FaultPlan()
    let transport: ScriptedTransport

    init() throws {
        scratch = try Scratch()
        let versions = try VersionPair(in: scratch, id: Self.id)
        (v10, v11) = (versions.v10, versions.v11)
        transport = ScriptedTransport(serving: scratch.path("pub"), base: Self.base, faults: faults)
    }

    func publish(_ package: String) throws {
        let report = try Publisher(destination: scratch.path("pub")).publish([package])
        try #require(report.status == .published, "\(report.diagnostics)")
    }

    func install(_ package: String) throws {
        let report = try Installer(documents: scratch.documents).install(package)
        try #require(report.status == .installed, "\(report.diagnostics)")
    }

    var client: SyncClient {
        SyncClient(catalogURL: Self.base.appendingPathComponent("catalog.json"), documents: scratch.documents, transport: transport)
    }

    func options(delta: Bool = true, cancellation: Cancellation? = nil) -> SyncClient.Options {
        SyncClient.Options(products: [Self.id], trust: .unsigned, delta: delta, retryPolicy: instantRetries,
                           transferPolicy: TransferPolicy(clock: transport.clock), cancellation: cancellation)
    }

    var productFolder: String { scratch.documents + "/" + Self.id }

    /// 1.1 published, and its first install cut short once its `.part` holds 150,000 bytes.
    func interruptFirstInstall() async throws {
        try publish(v11.pkg)
        faults.plan("1.1.pkg", [.stallAfter(bytes: 150_000)])
        let cancellation = Cancellation()
        let first = Task { try await client.sync(options(cancellation: cancellation)) }
        await transport.stalls(atLeast: 1)
        cancellation.cancel()
        await #expect(throws: OperationCancelled.self) { try await first.value }
        try #require(scratch.size("Documents/\(Self.id)/.download-1.1.part") == 150_000)
    }
    var packageRequests: [ScriptedTransport.Exchange] { transport.exchanges(for: "1.1.pkg") }

    @Test func aFreshInstallDownloadsThePackageWhole() async throws {
        try publish(v11.pkg)
        let report = try await client.sync(options())
        let result = try #require(report.products.first)
        #expect(result.status == .installed && !result.delta && result.previousVersion == nil)
        #expect(differences(productFolder + "/1.1", expected: snapshot(v11.contents)).isEmpty)
        let size = try #require(scratch.size("v11.pkg"))
        #expect(result.bytesDownloaded == size)
        #expect(report.bytesDownloaded == transport.exchanges.reduce(0) { $0 + $1.bytesSent }, "every body byte, the catalog's too")
        #expect(report.outcome == .success)
        // The catalog may travel compressed; a package never does (its sizes, digests and ranges
        // are the stored bytes').
        let catalogRequests = transport.exchanges(for: "catalog.json")
        #expect(!catalogRequests.isEmpty && catalogRequests.allSatisfy { $0.request.acceptsGzip })
        #expect(!packageRequests.isEmpty && packageRequests.allSatisfy { !$0.request.acceptsGzip })
    }

    @Test func anUpdateFetchesOnlyTheChangedRanges() async throws {
        try install(v10.pkg)
        try publish(v11.pkg)
        let report = try await client.sync(options())
        let result = try #require(report.products.first)
        #expect(result.status == .installed && result.delta && result.previousVersion == "1.0")
        #expect(result.filesDownloaded == 1)
        #expect(differences(productFolder + "/1.1", expected: snapshot(v11.contents)).isEmpty)
        #expect(packageRequests.allSatisfy { $0.status == 206 }, "\(packageRequests.map(\.request.range))")
        #expect(result.bytesDownloaded <= 100_000 + 64 * 1024, "the first 64 KiB request and the changed file")
    }

    @Test func aServerIgnoringRangeGetsOneWholeDownload() async throws {
        try install(v10.pkg)
        try publish(v11.pkg)
        faults.always("1.1.pkg", .ignoreRange)
        let result = try #require(try await client.sync(options()).products.first)
        #expect(result.status == .installed && !result.delta)
        #expect(result.fullDownloadReason == .serverIgnoresRange)
        #expect(packageRequests.count == 1, "one plain download, not a request per file")
        #expect(differences(productFolder + "/1.1", expected: snapshot(v11.contents)).isEmpty)
    }

    @Test func anInterruptedDownloadResumesWhereItStopped() async throws {
        try await interruptFirstInstall()
        #expect(!exists(productFolder + "/1.1"))

        let result = try #require(try await client.sync(options()).products.first)
        #expect(result.status == .installed)
        #expect(result.resumedFrom == 150_000)
        #expect(packageRequests.last?.request.range == ByteRange(from: 150_000))
        #expect(differences(productFolder + "/1.1", expected: snapshot(v11.contents)).isEmpty)
        #expect(!exists(productFolder + "/.download-1.1.part"), "the download goes once installed")
    }

    /// An app's update run at launch names no product: the one being installed is finished.
    @Test func anUpdateRunFinishesAnInterruptedFirstInstall() async throws {
        try await interruptFirstInstall()
        var updateRun = options()
        updateRun.products = []
        let report = try await client.sync(updateRun)
        let result = try #require(report.products.first)
        #expect(report.products.map(\.productIdentifier) == [Self.id])
        #expect(result.status == .installed && result.resumedFrom == 150_000 && result.previousVersion == nil, "\(result)")
        #expect(packageRequests.last?.request.range == ByteRange(from: 150_000))
        #expect(differences(productFolder + "/1.1", expected: snapshot(v11.contents)).isEmpty)
    }

    @Test func checkCountsWhatAnInterruptedFirstInstallHolds() async throws {
        try await interruptFirstInstall()
        let size = try #require(scratch.size("v11.pkg"))
        var updateRun = options()
        updateRun.products = []
        for check in [updateRun, options()] {
            let report = try await client.check(check)
            let product = try #require(report.products.first, "an update run lists the product being installed")
            #expect(product.status == .update && product.previousVersion == nil)
            #expect(product.bytesToDownload == size - 150_000, "what the part holds is not downloaded again")
            #expect(product.resumedFrom == 150_000)
            let json = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(report)) as? [String: Any])
            #expect((json["products"] as? [[String: Any]])?.first?["resumedFrom"] as? Int == 150_000, "the check's JSON says so too")
        }
    }

    @Test func aStallTimesOutAndTheRetryResumes() async throws {
        try publish(v11.pkg)
        faults.plan("1.1.pkg", [.stallAfter(bytes: 100_000)])
        let sync = Task { try await client.sync(options()) }
        await transport.stalls(atLeast: 1)
        transport.clock.advance(by: .seconds(30))
        let result = try #require(try await sync.value.products.first)
        #expect(result.status == .installed)
        #expect(packageRequests.map { $0.request.range } == [nil, ByteRange(from: 100_000)])
    }

    @Test(arguments: [FaultHTTPServer.LongBodyLength.absent, .includingExtra])
    func aPackageLongerThanItsEntryIsRefusedAndNothingKept(length: FaultHTTPServer.LongBodyLength) async throws {
        try install(v10.pkg)
        try publish(v11.pkg)
        faults.always("1.1.pkg", .longBody(extra: 6 << 20, contentLength: length))
        let report = try await client.sync(options(delta: false))
        let result = try #require(report.products.first)
        #expect(result.status == .refused)
        #expect(result.diagnostics.map(\.code) == [.checksumMismatch])
        #expect(readRecord(productFolder)?.version == "1.0")
        #expect(!exists(productFolder + "/.download-1.1.part"))
        #expect(packageRequests.count == 1 && packageRequests[0].cancelled, "cut off, not retried")
        #expect(report.outcome == .refused)
    }

    /// The stall lasts until cancelled and the clock is manual: nothing but the cancel can end
    /// the sync (one that ignored it would hang until the time limit).
    @Test(.timeLimit(.minutes(2))) func cancellingTheTaskStopsAStalledSync() async throws {
        try install(v10.pkg)
        try publish(v11.pkg)
        faults.always("1.1.pkg", .stallAfter(bytes: 50_000))
        let sync = Task { try await client.sync(options(delta: false)) }
        await transport.stalls(atLeast: 1)
        sync.cancel()
        await #expect(throws: OperationCancelled.self) { try await sync.value }
        #expect(readRecord(productFolder)?.version == "1.0")
        #expect(scratch.size("Documents/\(Self.id)/.download-1.1.part") == 50_000)
    }

    @Test func aBadSignatureStillCountsTheBytesReceived() async throws {
        try publish(v11.pkg)
        var options = options()
        options.trust = .signed(by: CatalogSigningKey().publicKey)
        let report = try await client.sync(options)
        #expect(report.products.map(\.status) == [.refused])
        // Said once: by the product, which the catalog's failure stopped.
        #expect(report.products.flatMap(\.diagnostics).map(\.code) == [.badSignature])
        #expect(report.diagnostics.isEmpty)
        #expect(report.bytesDownloaded > 0 && report.bytesDownloaded == transport.exchanges.reduce(0) { $0 + $1.bytesSent })
        #expect(report.outcome == .refused)
    }

    @Test func checkReportsAnUpdateWithoutInstallingOrWriting() async throws {
        try install(v10.pkg)
        try publish(v11.pkg)
        let before = snapshot(scratch.documents)
        let report = try await client.check(options())
        let product = try #require(report.products.first)
        #expect(product.status == .update && product.delta)
        #expect(product.previousVersion == "1.0" && product.contentVersion == "1.1")
        #expect(product.bytesToDownload > 100_000 && product.bytesToDownload <= 100_000 + 64 * 1024, "the first 64 KiB request and the changed file")
        #expect(report.outcome == .updatesAvailable)
        #expect(differences(scratch.documents, expected: before).isEmpty, "a check writes nothing")
        // Only the header and TOC of the package were asked for.
        #expect(packageRequests.map { $0.request.range } == [ByteRange(0 ..< 65_536)])
    }

    @Test func checkOfAServerIgnoringRangeDropsTheTransferAtOnce() async throws {
        try install(v10.pkg)
        try publish(v11.pkg)
        faults.always("1.1.pkg", .ignoreRange)
        let product = try #require(try await client.check(options()).products.first)
        #expect(product.status == .update && !product.delta)
        #expect(product.fullDownloadReason == .serverIgnoresRange)
        #expect(product.bytesToDownload == scratch.size("v11.pkg"))
        #expect(packageRequests.map(\.bytesSent) == [0] && packageRequests[0].cancelled)
    }

    /// What a check can meet on its way to a product's update.
    enum Situation: String, CaseIterable {
        case nothingInstalled, previousVersionInstalled, serverIgnoresRange, deltasOff
    }

    /// A check runs the sync's own plan and steps: whatever it says a sync would fetch (a delta
    /// or the whole package, and why, and how many bytes) is what the sync then fetches.
    @Test(arguments: Situation.allCases)
    func aSyncFetchesWhatTheCheckSaid(_ situation: Situation) async throws {
        if situation != .nothingInstalled { try install(v10.pkg) }
        try publish(v11.pkg)
        if situation == .serverIgnoresRange { faults.always("1.1.pkg", .ignoreRange) }
        let checkReport = try await client.check(options(delta: situation != .deltasOff))
        let check = try #require(checkReport.products.first)
        #expect(checkReport.mode == .check && checkReport.outcome == .updatesAvailable)
        #expect(check.status == .update && check.delta == (situation == .previousVersionInstalled))
        let size = try #require(scratch.size("v11.pkg"))
        #expect(situation == .previousVersionInstalled ? check.bytesToDownload < size / 2 : check.bytesToDownload == size)

        let sync = try #require(try await client.sync(options(delta: situation != .deltasOff)).products.first)
        #expect(sync.status == .installed)
        #expect(sync.delta == check.delta)
        #expect(sync.fullDownloadReason == check.fullDownloadReason)
        #expect(sync.bytesDownloaded == check.bytesToDownload, "the check said \(check.bytesToDownload) bytes")
        #expect(differences(productFolder + "/1.1", expected: snapshot(v11.contents)).isEmpty)
    }

    @Test func checkWithKeepRemovesNoVersion() async throws {
        try install(v10.pkg)
        try install(v11.pkg)
        try publish(v11.pkg)
        let before = snapshot(scratch.documents)
        var options = options()
        options.keep = 1
        let report = try await client.check(options)
        #expect(report.products.map(\.status) == [.unchanged])
        #expect(report.products.first?.removedVersions == [])
        #expect(differences(scratch.documents, expected: before).isEmpty, "1.0 is still there: a check writes nothing")
        #expect(exists(productFolder + "/1.0"))
    }

    @Test func checkOfAnUpToDateProductIsASuccess() async throws {
        try install(v11.pkg)
        try publish(v11.pkg)
        let report = try await client.check(options())
        #expect(report.products.map(\.status) == [.unchanged])
        #expect(report.outcome == .success)
        #expect(transport.exchanges(for: "1.1.pkg").isEmpty)
    }
}
