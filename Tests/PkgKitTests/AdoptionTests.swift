import Foundation
@testable import PkgKit
@testable import PkgKitSync
import Testing
import TestSupport

/// Content an app already has (what SKDownload delivered: `ContentInfo.plist` beside `Contents/`)
/// adopted as an installed version: verified file by file against that version's TOC, nothing
/// downloaded but the catalog and the TOC when it matches, only what differs when it does not,
/// and the next update a delta. Against a scripted server, with no socket and no sleep.
@Suite(.offThePool) struct AdoptionTests {
    static let id = "com.example.adopted"
    static let base = URL(string: "http://cdn.test/pub/")!
    let scratch: Scratch
    let v10: (pkg: String, contents: String)
    let v11: (pkg: String, contents: String)
    let faults = ScriptedTransport.FaultPlan()
    let transport: ScriptedTransport
    /// What the device holds: a copy of 1.0's source folder, as SKDownload left it.
    let device: String

    init() throws {
        scratch = try Scratch()
        let versions = try VersionPair(in: scratch, id: Self.id)
        (v10, v11) = (versions.v10, versions.v11)
        transport = ScriptedTransport(serving: scratch.path("pub"), base: Self.base, faults: faults)
        device = scratch.path("device/chapter")
        try FileManager.default.createDirectory(atPath: scratch.path("device"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: scratch.path("src-v10"), toPath: device)
        try publish(v10.pkg)
    }

    func publish(_ package: String) throws {
        let report = try Publisher(destination: scratch.path("pub")).publish([package])
        try #require(report.status == .published, "\(report.diagnostics)")
    }

    var client: SyncClient {
        SyncClient(catalogURL: Self.base.appendingPathComponent("catalog.json"), documents: scratch.documents, transport: transport)
    }

    var options: SyncClient.Options {
        SyncClient.Options(trust: .unsigned, retryPolicy: instantRetries, transferPolicy: TransferPolicy(clock: transport.clock))
    }

    var productFolder: String { scratch.documents + "/" + Self.id }
    var packageRequests: [ScriptedTransport.Exchange] { transport.exchanges(for: "1.0.pkg") }

    /// The tree and record a full install of `package` gives, in a Documents folder of its own.
    func fullInstall(_ package: String, version: String) throws -> (tree: [String: TreeEntry], record: Data?) {
        let documents = scratch.path("full-" + version)
        let report = try Installer(documents: documents).install(package)
        try #require(report.status == .installed, "\(report.diagnostics)")
        return (snapshot(documents + "/\(Self.id)/\(version)"), FileManager.default.contents(atPath: documents + "/\(Self.id)/ContentInfo.plist"))
    }

    func adopt(_ folder: String? = nil, as version: String = "1.0") async throws -> ProductSyncResult {
        let report = try await client.adopt(URL(fileURLWithPath: folder ?? device), as: version, of: Self.id, options: options)
        return try #require(report.products.first)
    }

    @Test func aMatchingFolderIsInstalledWithNothingDownloadedButTheTableOfContents() async throws {
        let before = snapshot(device)
        let result = try await adopt()
        #expect(result.status == .installed, "\(result.diagnostics)")
        #expect(result.delta && result.previousVersion == nil && result.contentVersion == "1.0")
        #expect(result.filesDownloaded == 0)
        // One ranged request: the header and TOC (with ContentInfo.plist, first in the heap).
        #expect(packageRequests.count == 1 && packageRequests.allSatisfy { $0.status == 206 && $0.request.range?.lowerBound == 0 },
                "\(packageRequests.map(\.request.range))")
        #expect(result.bytesDownloaded == DeltaDownload.firstRequestBytes)
        let full = try fullInstall(v10.pkg, version: "1.0")
        #expect(snapshot(productFolder + "/1.0") == full.tree)
        #expect(FileManager.default.contents(atPath: productFolder + "/ContentInfo.plist") == full.record)
        // The folder given is only read; nothing of the work is left in the product folder.
        #expect(snapshot(device) == before)
        #expect(Set(names(productFolder)).isSubset(of: ["1.0", "ContentInfo.plist", ".lock", ".index-1.0"]), "\(names(productFolder))")
    }

    @Test func aFileThatLooksRightButIsNotIsFetchedAndOnlyIt() async throws {
        // Same name, same size, other bytes: only its sha1 tells.
        try scratch.write("device/chapter/Contents/changing.bin", pseudoRandomData(100_000, seed: 9))
        let result = try await adopt()
        #expect(result.status == .installed && result.delta, "\(result.diagnostics)")
        #expect(result.filesDownloaded == 1)
        #expect(result.bytesDownloaded < DeltaDownload.firstRequestBytes + 100_000 + 1024, "only the changed file's range")
        #expect(snapshot(productFolder + "/1.0") == (try fullInstall(v10.pkg, version: "1.0")).tree)
    }

    @Test func missingFilesAreFetchedAndFilesTheVersionLacksAreNotInstalled() async throws {
        try FileManager.default.removeItem(atPath: device + "/Contents/big.bin")
        try FileManager.default.removeItem(atPath: device + "/Contents/pages/p3.txt")
        try scratch.write("device/chapter/Contents/notes.txt", "the app's own note\n")
        try FileManager.default.createSymbolicLink(atPath: device + "/Contents/outside", withDestinationPath: "/etc/passwd")
        let result = try await adopt()
        #expect(result.status == .installed && result.delta, "\(result.diagnostics)")
        #expect(result.filesDownloaded == 2)
        #expect(result.bytesDownloaded < DeltaDownload.firstRequestBytes + 400_000 + 32 * 1024)
        #expect(snapshot(productFolder + "/1.0") == (try fullInstall(v10.pkg, version: "1.0")).tree)
    }

    @Test func theContentsTreeAloneIsAdoptedToo() async throws {
        // An app that copied SKDownload's Contents/ elsewhere kept no ContentInfo.plist.
        let result = try await adopt(device + "/Contents")
        #expect(result.status == .installed && result.filesDownloaded == 0, "\(result.diagnostics)")
        #expect(snapshot(productFolder + "/1.0") == (try fullInstall(v10.pkg, version: "1.0")).tree)
    }

    @Test func theNextUpdateIsADelta() async throws {
        #expect(try await adopt().status == .installed)
        try publish(v11.pkg)
        var sync = options
        sync.products = [Self.id]
        let result = try #require(try await client.sync(sync).products.first)
        #expect(result.status == .installed && result.delta && result.previousVersion == "1.0", "\(result.diagnostics)")
        #expect(result.filesDownloaded == 1)
        #expect(snapshot(productFolder + "/1.1") == (try fullInstall(v11.pkg, version: "1.1")).tree)
    }

    @Test func aVersionTheCatalogDoesNotListIsRefused() async throws {
        let result = try await adopt(as: "0.9")
        #expect(result.status == .refused)
        #expect(result.diagnostics.map(\.code) == [.unknownProduct])
        #expect(result.diagnostics.first?.message.contains("not its version 0.9 (it lists 1.0)") == true, "\(result.diagnostics)")
        #expect(!exists(productFolder), "nothing installed, no product folder made")
        #expect(packageRequests.isEmpty)
        let other = try #require(try await client.adopt(URL(fileURLWithPath: device + "/Contents"), as: "1.0", of: "com.example.other",
                                                        options: options).products.first)
        #expect(other.status == .refused && other.diagnostics.map(\.code) == [.unknownProduct])
    }

    @Test func aProductWithThisVersionOrANewerOneInstalledIsRefused() async throws {
        try publish(v11.pkg)
        let installed = try Installer(documents: scratch.documents).install(v11.pkg)
        try #require(installed.status == .installed)
        let result = try await adopt()
        #expect(result.status == .refused && result.previousVersion == "1.1")
        #expect(result.diagnostics.map(\.code) == [.versionNotBumped])
        #expect(result.diagnostics.first?.message.contains("newer than 1.0") == true, "\(result.diagnostics)")
        #expect(transport.exchanges(for: "1.0.pkg").isEmpty && transport.exchanges(for: "1.1.pkg").isEmpty)
        #expect(readRecord(productFolder)?.version == "1.1")
        #expect(!exists(productFolder + "/1.0"))
        // Adopted once, the same version again is refused too: the folder is not needed any more.
        let documents = scratch.path("again")
        let again = SyncClient(catalogURL: Self.base.appendingPathComponent("catalog.json"), documents: documents, transport: transport)
        #expect(try await again.adopt(device, as: "1.0", of: Self.id, options: options).products.first?.status == .installed)
        let twice = try #require(try await again.adopt(device, as: "1.0", of: Self.id, options: options).products.first)
        #expect(twice.status == .refused && twice.diagnostics.map(\.code) == [.versionNotBumped])
        #expect(twice.diagnostics.first?.message.contains("is installed already") == true)
    }

    @Test func aFolderOfAnotherProductOrNoFolderAtAllIsNotAdopted() async throws {
        // The folder's own ContentInfo.plist names com.example.adopted.
        let other = try #require(try await client.adopt(device, as: "1.0", of: "com.example.other", options: options).products.first)
        #expect(other.status == .refused && other.diagnostics.map(\.code) == [.productIdentifierMismatch], "\(other.diagnostics)")
        let missing = try await adopt(scratch.path("device/nothere"))
        #expect(missing.status == .failed && missing.diagnostics.map(\.code) == [.unreadableInput])
        #expect(!exists(productFolder) && transport.exchanges.isEmpty, "refused before the catalog is fetched")
    }

    @Test func anOlderVersionsFolderAdoptedAsANewerOneFetchesOnlyWhatChanged() async throws {
        try publish(v11.pkg)
        let result = try #require(try await client.adopt(device, as: "1.1", of: Self.id, options: options).products.first)
        #expect(result.status == .installed && result.delta && result.contentVersion == "1.1", "\(result.diagnostics)")
        #expect(result.filesDownloaded == 1, "changing.bin, the one file 1.1 changed")
        #expect(transport.exchanges(for: "1.0.pkg").isEmpty)
        #expect(snapshot(productFolder + "/1.1") == (try fullInstall(v11.pkg, version: "1.1")).tree)
    }

    @Test func anAdoptionCancelledWhileDownloadingLeavesNothing() async throws {
        // Stopped in the middle of the table of contents' request, with the folder's copy made.
        faults.plan("1.0.pkg", [.stallAfter(bytes: 1000)])
        let before = snapshot(device)
        let cancellation = Cancellation()
        var cancelled = options
        cancelled.cancellation = cancellation
        let adoption = Task { try await client.adopt(device, as: "1.0", of: Self.id, options: cancelled) }
        await transport.stalls(atLeast: 1)
        #expect(names(productFolder).contains { $0.hasPrefix(ProductFolder.adoptionPrefix) }, "the copy is there while it runs")
        cancellation.cancel()
        await #expect(throws: OperationCancelled.self) { try await adoption.value }
        #expect(!exists(productFolder + "/1.0") && readRecord(productFolder) == nil)
        #expect(names(productFolder).allSatisfy { !$0.hasPrefix(ProductFolder.adoptionPrefix) && !$0.hasPrefix(".delta-") },
                "\(names(productFolder))")
        #expect(snapshot(device) == before)
    }
}
