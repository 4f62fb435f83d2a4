import Foundation
import Testing
import TestSupport
@testable import PkgKit
#if canImport(Glibc)
import Glibc
#endif

/// Signature files named after the exact catalog bytes they sign (SPEC section 7), from
/// `Publisher` to `Catalog.fetch`: a stale catalog verifies with its own signature, never with
/// another catalog's; keys rotate; the newest 32 files are kept in the order publish wrote them.
/// Everything runs on a local folder through `file://` URLs.
@Suite struct SignatureFilesTests {
    let scratch: Scratch
    let old = CatalogSigningKey()
    let new = CatalogSigningKey()

    init() throws {
        scratch = try Scratch()
    }

    var folder: String { scratch.path("published") }
    var signatures: String { folder + "/signatures" }

    /// A package of `id` at `version`, built in-process.
    func package(_ version: String, id: String = "com.example.book") throws -> String {
        let source = "src-\(id)-\(version)"
        try scratch.write(source + "/chapter.txt", "chapter, version \(version)\n")
        let output = scratch.path("\(id)-\(version).pkg")
        let result = try PackageCreator.create(CreateRequest(source: scratch.path(source), output: output,
                                                             productIdentifier: id, contentVersion: version))
        #expect(result.output == output, "\(result.diagnostics)")
        return output
    }

    @discardableResult
    func publish(_ version: String, signedWith keys: [CatalogSigningKey], into destination: String? = nil) throws -> PublishReport {
        try Publisher(destination: destination ?? folder).publish([package(version)], options: PublishOptions(signingKeys: keys))
    }

    func fetch(_ folder: String, trusting keys: [CatalogSigningKey]) async throws -> FetchedCatalog {
        try await Catalog.fetch(from: URL(fileURLWithPath: folder + "/catalog.json"), using: LocalFileTransport(),
                                trust: CatalogTrust.signed(byAnyOf: keys.map(\.publicKey)) ?? .unsigned, retryPolicy: instantRetries)
    }

    func catalogBytes(_ folder: String? = nil) throws -> Data {
        try Data(contentsOf: URL(fileURLWithPath: (folder ?? self.folder) + "/catalog.json"))
    }

    /// The signature file names in the folder, without `order.txt`.
    var signatureFiles: [String] { names(signatures).filter { $0.hasSuffix(".sig") } }

    @Test func aStaleCatalogVerifiesWithItsOwnSignatureAndNeverWithAnothers() async throws {
        try publish("1.0", signedWith: [old])
        let v1 = try catalogBytes()
        let report = try publish("2.0", signedWith: [old])
        let v2 = try catalogBytes()
        #expect(report.signature == folder + "/signatures/\(sha256Hex(v2)).sig")
        #expect(signatureFiles == ["\(sha256Hex(v1)).sig", "\(sha256Hex(v2)).sig"].sorted())
        #expect(!exists(folder + "/catalog.json.sig"))
        let file = try #require(scratch.contents("published/signatures/\(sha256Hex(v2)).sig"))
        #expect(file == old.signatureFile(for: v2))

        // A CDN edge that still serves the old catalog beside the new files.
        let edge = scratch.path("edge")
        try FileManager.default.copyItem(atPath: folder, toPath: edge)
        try v1.write(to: URL(fileURLWithPath: edge + "/catalog.json"))
        let stale = try await fetch(edge, trusting: [old])
        #expect(stale.bytes == v1 && stale.signature == .verified)
        #expect(stale.catalog.product("com.example.book")?.latest.description == "1.0")
        let fresh = try await fetch(folder, trusting: [old])
        #expect(fresh.bytes == v2 && fresh.catalog.product("com.example.book")?.latest.description == "2.0")

        // The old catalog paired with the new catalog's signature file: refused.
        let staleSignature = edge + "/signatures/\(sha256Hex(v1)).sig"
        try FileManager.default.removeItem(atPath: staleSignature)
        try FileManager.default.copyItem(atPath: edge + "/signatures/\(sha256Hex(v2)).sig", toPath: staleSignature)
        do {
            _ = try await fetch(edge, trusting: [old])
            Issue.record("a catalog verified with another catalog's signature")
        } catch let error as SignatureError {
            #expect(error.diagnostic.code == .badSignature)
            #expect(error.path == staleSignature)
        }
        // And with no signature file for its bytes at all.
        try FileManager.default.removeItem(atPath: staleSignature)
        await #expect(throws: SignatureError.self) { try await fetch(edge, trusting: [old]) }
    }

    @Test func keysRotateWithOneLinePerKey() async throws {
        try publish("1.0", signedWith: [old])
        #expect(try await fetch(folder, trusting: [old]).verified)
        await #expect(throws: SignatureError.self) { try await fetch(folder, trusting: [new]) }

        // Both keys while both are in the field: apps trusting either accept the catalog.
        try publish("1.1", signedWith: [old, new])
        let both = try catalogBytes()
        #expect(scratch.contents("published/signatures/\(sha256Hex(both)).sig") == CatalogSignature.fileContents(signing: both, with: [old, new]))
        for trusted in [[old], [new], [CatalogSigningKey(), new]] {
            #expect(try await fetch(folder, trusting: trusted).verified)
        }
        await #expect(throws: SignatureError.self) { try await fetch(folder, trusting: [CatalogSigningKey()]) }

        // Then the new key alone: the published catalog verifies with it, so the folder accepts it.
        let stale = try catalogBytes()
        try publish("1.2", signedWith: [new])
        #expect(try await fetch(folder, trusting: [new]).verified)
        await #expect(throws: SignatureError.self) { try await fetch(folder, trusting: [old]) }
        // An app that still trusts only the old key, served the previous catalog by a cache, verifies it.
        let edge = scratch.path("edge")
        try FileManager.default.copyItem(atPath: folder, toPath: edge)
        try stale.write(to: URL(fileURLWithPath: edge + "/catalog.json"))
        #expect(try await fetch(edge, trusting: [old]).verified)

        // A key the published catalog does not verify with is refused, and nothing changes.
        let before = names(folder) + signatureFiles
        let refused = try publish("1.3", signedWith: [old])
        #expect(refused.status == .refused)
        #expect(refused.diagnostics.map(\.code) == [.badSignature])
        #expect(refused.diagnostics.first?.path == folder + "/signatures/\(sha256Hex(try catalogBytes())).sig")
        #expect(names(folder) + signatureFiles == before)
        // So is a publish without a key, which would leave the folder unsigned.
        #expect(try publish("1.3", signedWith: []).status == .refused)
    }

    @Test func theNewest32AreKeptInTheOrderPublishWroteThem() throws {
        var digests: [String] = []
        for minor in 0..<33 {
            try publish("1.\(minor)", signedWith: [old])
            digests.append(sha256Hex(try catalogBytes()))
        }
        #expect(signatureFiles == digests.suffix(32).map { $0 + ".sig" }.sorted())
        #expect(scratch.text("published/signatures/order.txt") == digests.suffix(32).map { $0 + "\n" }.joined())

        // Times say nothing: a folder synced down from an object store has them all alike, or
        // backwards. The record decides; a signature file it does not list counts as oldest.
        for (index, digest) in digests.suffix(32).enumerated() {
            var times = [timeval(tv_sec: 2_000_000_000 - index, tv_usec: 0), timeval(tv_sec: 2_000_000_000 - index, tv_usec: 0)]
            #expect(utimes(signatures + "/\(digest).sig", &times) == 0)
        }
        let stray = String(repeating: "ab", count: 32)
        try scratch.write("published/signatures/\(stray).sig", CatalogSignature.fileContents(signing: Data("other".utf8), with: [old]))
        var newest = [timeval(tv_sec: 2_100_000_000, tv_usec: 0), timeval(tv_sec: 2_100_000_000, tv_usec: 0)]
        #expect(utimes(signatures + "/\(stray).sig", &newest) == 0)
        try scratch.write("published/signatures/README", "not publish's\n")
        try publish("1.33", signedWith: [old])
        digests.append(sha256Hex(try catalogBytes()))
        #expect(signatureFiles == digests.suffix(32).map { $0 + ".sig" }.sorted(), "the stray and the oldest recorded go")
        #expect(exists(signatures + "/README"))
        try publish("1.34", signedWith: [old])
        digests.append(sha256Hex(try catalogBytes()))
        #expect(signatureFiles == digests.suffix(32).map { $0 + ".sig" }.sorted())
        #expect(scratch.text("published/signatures/order.txt") == digests.suffix(32).map { $0 + "\n" }.joined())

        // Publishing the same package again changes nothing at all.
        let before = try snapshotOfSignatures()
        let again = try Publisher(destination: folder).publish([scratch.path("com.example.book-1.34.pkg")],
                                                               options: PublishOptions(signingKeys: [old]))
        #expect(again.status == .unchanged)
        #expect(try snapshotOfSignatures() == before)
    }

    @Test func withoutATrustedKeyTheSignatureIsReportedNotChecked() async throws {
        let unsigned = scratch.path("unsigned")
        try publish("1.0", signedWith: [], into: unsigned)
        #expect(!exists(unsigned + "/signatures"))
        let absent = try await fetch(unsigned, trusting: [])
        #expect(absent.signature == .absent && !absent.verified && absent.signatureFile == nil)
        #expect(absent.bytesDownloaded == Int64(absent.bytes.count))

        try publish("1.0", signedWith: [old])
        let unchecked = try await fetch(folder, trusting: [])
        #expect(unchecked.signature == .unchecked && !unchecked.verified)
        #expect(unchecked.signatureURL.path == signatures + "/\(sha256Hex(unchecked.bytes)).sig")
        #expect(unchecked.bytesDownloaded == Int64(unchecked.bytes.count + 89))
        #expect(try await fetch(folder, trusting: [old]).signature == .verified)
        // Not checked means not checked: a signature by a stranger is still only "unchecked".
        try CatalogSigningKey().signatureFile(for: unchecked.bytes).write(to: unchecked.signatureURL)
        #expect(try await fetch(folder, trusting: []).signature == .unchecked)
    }

    /// A folder last signed by a pkgtool that wrote `catalog.json.sig`: it counts as signed, a
    /// signed publish gives its catalog a signature file too (for caches still serving it), and
    /// the old file goes.
    @Test func aFolderSignedTheOldWayMovesToSignatureFiles() async throws {
        try publish("1.0", signedWith: [])
        let v1 = try catalogBytes()
        try old.signatureFile(for: v1).write(to: URL(fileURLWithPath: folder + "/catalog.json.sig"))
        #expect(try Publisher(destination: folder).publish([package("1.0")]).signature == folder + "/catalog.json.sig")
        let unsigned = try publish("1.1", signedWith: [])
        #expect(unsigned.status == .refused)
        #expect(unsigned.diagnostics.first?.path == folder + "/catalog.json.sig")
        #expect(try publish("1.1", signedWith: [new]).status == .refused)

        let signed = try publish("1.1", signedWith: [old])
        #expect(signed.status == .published)
        let v2 = try catalogBytes()
        #expect(!exists(folder + "/catalog.json.sig"))
        #expect(signatureFiles == ["\(sha256Hex(v1)).sig", "\(sha256Hex(v2)).sig"].sorted())
        #expect(scratch.text("published/signatures/order.txt") == "\(sha256Hex(v1))\n\(sha256Hex(v2))\n")
        try v1.write(to: URL(fileURLWithPath: folder + "/catalog.json"))
        #expect(try await fetch(folder, trusting: [old]).verified)
    }

    private func snapshotOfSignatures() throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in names(signatures) { files[name] = try Data(contentsOf: URL(fileURLWithPath: signatures + "/" + name)) }
        return files
    }
}
