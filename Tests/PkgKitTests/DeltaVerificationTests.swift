import Foundation
@testable import PkgKit
import Testing
import TestSupport

/// Every byte a delta installs is checked against a digest the anchored TOC carries: a package
/// where a file to be fetched has no checksum (other xar writers leave them out) is downloaded
/// whole and checked against the catalog's sha256, so a server that alters the ranges it serves
/// installs nothing altered. `publish` warns about such a package.
@Suite(.offThePool) struct DeltaVerificationTests {
    static let id = "com.example.verified"
    static let base = URL(string: "http://cdn.test/pub/")!

    /// Which file of 1.1 has no checksums.
    enum Unchecked: String, CaseIterable, CustomTestStringConvertible {
        case storedFile, compressedFile, contentInfo
        var testDescription: String { rawValue }
        var path: String { self == .contentInfo ? "ContentInfo.plist" : "Contents/big.bin" }
    }

    /// 1.0 and 1.1 of a product crafted by hand; 1.1's `unchecked` file carries no checksum.
    static func packages(_ s: Scratch, unchecked: Unchecked?) throws -> (v10: String, v11: String) {
        func version(_ version: String, seed: UInt64, unchecked: Unchecked?) -> XarCrafter {
            var plist = XarCrafter.contentInfo(version: version, id: id)
            var big = XarCrafter.File(path: "Contents/big.bin", data: Array(pseudoRandomData(96 << 10, seed: seed)),
                                      encoding: unchecked == .compressedFile ? .zlib : .stored)
            plist.omitChecksums = unchecked == .contentInfo
            big.omitChecksums = unchecked == .storedFile || unchecked == .compressedFile
            // The same in both, and large enough that a delta pays (`SyncPlan.smallestDeltaPackage`).
            let same = XarCrafter.File(path: "Contents/same.bin", data: Array(pseudoRandomData(100 << 10, seed: 99)), encoding: .stored)
            return XarCrafter([plist, .file("Contents/a.txt", "same in both\n"), big, same])
        }
        return (try version("1.0", seed: 1, unchecked: nil).write(to: s.path("v10.pkg")),
                try version("1.1", seed: 2, unchecked: unchecked).write(to: s.path("v11.pkg")))
    }

    /// A server that answers Range requests with the first byte of `path`'s data (in the package
    /// at `package`) inverted, wherever a range it serves covers that byte.
    static func alteringTransport(_ s: Scratch, package: String, path: String) throws -> ScriptedTransport {
        let toc = try XarTableOfContents.read(package)
        let entry = try #require(toc.entry(path))
        let target = toc.heapStart + (try #require(entry.offset))
        return ScriptedTransport(serving: s.path("pub"), base: base) { request, reply in
            guard reply.head?.statusCode == 206, let range = reply.head?.contentRange, range.first <= target, target <= range.last,
                  case .bytes(var data) = reply.steps.first else { return reply }
            let at = data.startIndex + Int(target - range.first)
            data[at] ^= 0xFF
            return ScriptedTransport.Reply(head: reply.head, steps: [.bytes(data)])
        }
    }

    func sync(_ s: Scratch, _ transport: ScriptedTransport) async throws -> ProductSyncResult {
        let client = SyncClient(catalogURL: Self.base.appendingPathComponent("catalog.json"), documents: s.documents, transport: transport)
        let report = try await client.sync(SyncClient.Options(products: [Self.id], trust: .unsigned, retryPolicy: instantRetries,
                                                              transferPolicy: TransferPolicy(clock: transport.clock)))
        return try #require(report.products.first)
    }

    @Test(arguments: Unchecked.allCases)
    func aFileWithoutChecksumIsNeverTakenFromARange(_ unchecked: Unchecked) async throws {
        let s = try Scratch()
        let (v10, v11) = try Self.packages(s, unchecked: unchecked)
        #expect(try Installer(documents: s.documents).install(v10).status == .installed)
        let published = try Publisher(destination: s.path("pub")).publish([v11])
        try #require(published.status == .published, "\(published.diagnostics)")
        let warning = try #require(published.packages.first?.diagnostics.first { $0.code == .missingChecksum })
        #expect(warning.severity == .warning && warning.path == unchecked.path)
        #expect(warning.message.contains("download this version whole"))

        let transport = try Self.alteringTransport(s, package: v11, path: unchecked.path)
        let result = try await sync(s, transport)
        #expect(result.status == .installed, "\(result.diagnostics)")
        #expect(!result.delta && result.fullDownloadReason == .unverifiedFile)
        let installed = unchecked == .contentInfo ? "/ContentInfo.plist" : "/1.1/big.bin"
        let expected = unchecked == .contentInfo ? Data(XarCrafter.plist(version: "1.1", id: Self.id)) : pseudoRandomData(96 << 10, seed: 2)
        #expect(FileManager.default.contents(atPath: s.documents + "/" + Self.id + installed) == expected, "the file is the publisher's, not the server's")
        // The header and TOC were fetched by range, then the package whole, with no range.
        let requests = transport.exchanges(for: "1.1.pkg")
        #expect(requests.count == 2 && requests.last?.request.range == nil, "\(requests.map(\.request.range))")
    }

    /// The same server, the checksums in place: the delta takes the altered range, and the TOC's
    /// checksum refuses it; nothing is installed.
    @Test func anAlteredRangeOfAFileWithAChecksumIsRefused() async throws {
        let s = try Scratch()
        let (v10, v11) = try Self.packages(s, unchecked: nil)
        #expect(try Installer(documents: s.documents).install(v10).status == .installed)
        let published = try Publisher(destination: s.path("pub")).publish([v11])
        try #require(published.status == .published)
        #expect(published.packages.first?.diagnostics.contains { $0.code == .missingChecksum } == false)

        let result = try await sync(s, try Self.alteringTransport(s, package: v11, path: "Contents/big.bin"))
        #expect(result.status == .refused)
        #expect(result.diagnostics.map(\.code) == [.checksumMismatch], "\(result.diagnostics)")
        #expect(readRecord(s.documents + "/" + Self.id)?.version == "1.0")
        #expect(!exists(s.documents + "/" + Self.id + "/1.1"))
    }
}
