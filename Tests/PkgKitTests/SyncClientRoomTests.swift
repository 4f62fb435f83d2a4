import Foundation
@testable import PkgKit
import Testing
import TestSupport

/// Sync and install ask for room on the disk before they write (docs/sync.md, "Room on the disk
/// first"): the decision, made with a free-space figure the test gives, against the scripted
/// server of `SyncClientTests`. What is counted: a whole download's bytes still to come plus the
/// unpacked payload (both are on the disk until the install), a delta's ranges still to fetch
/// plus the files it does not reuse.
extension SyncClientTests {
    /// The catalog's entry for 1.1, once published.
    func latestEntry() throws -> CatalogVersion {
        let catalog = try Catalog(data: try Data(contentsOf: URL(fileURLWithPath: scratch.path("pub/catalog.json"))))
        return try #require(catalog.product(Self.id)?.latestVersion)
    }

    /// `options()` with `free` bytes free on every volume.
    func options(free: Int64) -> SyncClient.Options {
        var options = options()
        options.freeSpace = FreeSpace { _ in free }
        return options
    }

    /// The product's one diagnostic, required to be `insufficient-space`.
    func insufficientSpace(_ report: SyncReport, sourceLocation: SourceLocation = #_sourceLocation) throws -> Diagnostic {
        let product = try #require(report.products.first, sourceLocation: sourceLocation)
        #expect(product.status == .failed, sourceLocation: sourceLocation)
        let diagnostic = try #require(product.diagnostics.first, sourceLocation: sourceLocation)
        #expect(diagnostic.code == .insufficientSpace, "\(diagnostic)", sourceLocation: sourceLocation)
        #expect(report.outcome == .failed, sourceLocation: sourceLocation)
        return diagnostic
    }

    @Test func aWholeDownloadNeedsRoomForThePackageAndItsFilesAtOnce() async throws {
        try publish(v11.pkg)
        let entry = try latestEntry()
        let needed = entry.size + entry.payloadBytes
        let report = try await client.sync(options(free: needed - 1))
        let diagnostic = try insufficientSpace(report)
        #expect(diagnostic.message.contains("needs \(ByteSize.human(needed))"), "\(diagnostic.message)")
        #expect(diagnostic.message.contains("\(ByteSize.human(needed - 1)) free"), "\(diagnostic.message)")
        #expect(report.products.first?.insufficientSpace?.needed == needed && report.products.first?.insufficientSpace?.free == needed - 1,
                "an app gets both figures as numbers")
        #expect(packageRequests.isEmpty, "nothing of the package was downloaded")
        #expect(!exists(productFolder), "no product folder, no .part: \(names(scratch.documents))")

        let enough = try #require(try await client.sync(options(free: needed)).products.first)
        #expect(enough.status == .installed, "\(enough.diagnostics)")
        #expect(differences(productFolder + "/1.1", expected: snapshot(v11.contents)).isEmpty)
    }

    @Test func aResumedDownloadNeedsRoomOnlyForWhatIsStillToCome() async throws {
        try await interruptFirstInstall()
        let entry = try latestEntry()
        let part = "Documents/\(Self.id)/.download-1.1.part"

        let needed = entry.size - 150_000 + entry.payloadBytes
        let requests = packageRequests.count
        _ = try insufficientSpace(try await client.sync(options(free: needed - 1)))
        #expect(packageRequests.count == requests, "no request for the rest")
        #expect(scratch.size(part) == 150_000, "the download is kept for when there is room")

        let result = try #require(try await client.sync(options(free: needed)).products.first)
        #expect(result.status == .installed && result.resumedFrom == 150_000, "\(result.diagnostics)")
    }

    @Test func aDeltaNeedsRoomForItsRangesAndTheFilesItDoesNotReuse() async throws {
        try install(v10.pkg)
        try publish(v11.pkg)
        let entry = try latestEntry()
        // Far less than a whole download would need, enough for the changed file twice over.
        let delta = try #require(try await client.sync(options(free: 400_000)).products.first)
        #expect(delta.status == .installed && delta.delta, "\(delta.diagnostics)")
        #expect(400_000 < entry.size + entry.payloadBytes)

        // Back to 1.0, and too little room for the changed file: only the header and TOC came.
        try FileManager.default.removeItem(atPath: productFolder)
        try install(v10.pkg)
        let before = packageRequests.count
        let diagnostic = try insufficientSpace(try await client.sync(options(free: 150_000)))
        #expect(diagnostic.message.contains("150 kB free"), "\(diagnostic.message)")
        #expect(packageRequests.dropFirst(before).map(\.request.range) == [ByteRange(0 ..< 65_536)], "the header and TOC only")
        #expect(names(productFolder).allSatisfy { !$0.hasPrefix(".delta-") && !$0.hasPrefix(".download-") }, "\(names(productFolder))")
        #expect(readRecord(productFolder)?.version == "1.0", "the installed version stays current")
    }

    @Test func aCheckSaysThereIsNoRoomWithoutWritingAnything() async throws {
        try publish(v11.pkg)
        let entry = try latestEntry()
        let report = try await client.check(options(free: 1_000))
        let diagnostic = try insufficientSpace(report)
        #expect(diagnostic.message.contains("needs \(ByteSize.human(entry.size + entry.payloadBytes))"), "\(diagnostic.message)")
        #expect(report.products.first?.bytesToDownload == entry.size, "what a sync would download is still said")
        #expect(!exists(productFolder))
    }

    @Test func anInstallWithoutRoomWritesNothing() throws {
        var options = InstallOptions()
        options.freeSpace = FreeSpace { _ in 499_999 }
        #expect {
            try Installer(documents: scratch.documents).install(v10.pkg, options: options)
        } throws: { error in
            guard let error = error as? InsufficientSpace else { return false }
            return error.needed == 500_070 && error.free == 499_999 && error.diagnostic.code == .insufficientSpace
        }
        #expect(!exists(productFolder), "\(names(scratch.documents))")
        options.freeSpace = FreeSpace { _ in 500_070 }
        #expect(try Installer(documents: scratch.documents).install(v10.pkg, options: options).status == .installed)
    }

    @Test func theSystemsFigureIsAskedOfTheNearestFolderThatExists() throws {
        let free = try #require(FreeSpace.system.available(scratch.path("not/made/yet")), "a Documents folder not made yet")
        #expect(free > 0)
        _ = try scratch.write("file", Data("x".utf8))
        #expect(FreeSpace.system.available(scratch.path("file/below")) == nil, "no folder can be made there: the writes will say why")
    }
}
