import Foundation
import PkgKit
import Testing
import TestSupport

/// `pkgtool sync` of a package whose large files carry chunk tables, from nginx on loopback:
/// a change inside a 12 MiB file downloads the chunks around it, not the file, whether or not the
/// file was renamed, and installs the same tree a full download would (what `sync --check` and
/// `diff` say it downloads is what it downloads); a chunk that is not what the TOC says is refused.
@Suite(.offThePool, .timeLimit(.minutes(2))) struct ChunkedDeltaSyncTests {
    static let id = "com.example.chunks"
    let scratch: Scratch
    let original = compressibleText(12 << 20, seed: 21)
    let published: String

    init() throws {
        scratch = try Scratch()
        published = scratch.path("pub")
    }

    var productFolder: String { scratch.documents + "/" + Self.id }

    /// What an update from 1.0 (`original`) to 1.1 (`changed`) did.
    struct Update {
        var result: CommandResult
        /// What nginx sent of 1.1.pkg, and its size.
        var fetched: Int
        var packageSize: Int
        /// The file's stored size in 1.1.
        var storedSize: Int
        var contents: String
        /// What `sync --check` said it would download, before the update.
        var checked: Int?
        /// What `diff --json` said a device with 1.0 downloads to get 1.1.
        var diffed: Int?
    }

    func pkgtool(_ arguments: String...) async throws -> CommandResult {
        let result = try await CommandRunner.pkgtool(arguments)
        try #require(result.status == 0 || arguments.first == "sync", "\(arguments): \(result.stdout)\(result.stderr)")
        return result
    }

    /// Installs 1.0 by sync (`original` as `oldName`), then publishes 1.1 (`changed` as `newName`,
    /// `damage` done to it on the server) and syncs.
    func update(to changed: Data, from oldName: String = "assets/bundle.dat", as newName: String = "assets/bundle.dat",
                damage: ((String) throws -> Void)? = nil) async throws -> Update {
        let v10 = try scratch.package("v10", id: Self.id, version: "1.0", files: [oldName: original, "readme.txt": Data("hi\n".utf8)])
        let v11 = try scratch.package("v11", id: Self.id, version: "1.1", files: [newName: changed, "readme.txt": Data("hi\n".utf8)])
        let diffed = try await pkgtool("diff", v10.pkg, v11.pkg, "--json").json["downloadBytes"] as? Int
        _ = try await pkgtool("publish", v10.pkg, "--to", published)
        let nginx = try NginxServer(root: published)
        defer { nginx.stop() }
        let catalog = nginx.url("catalog.json").absoluteString
        let first = try await pkgtool("sync", catalog, "--product", Self.id, "--documents", scratch.documents, "--json")
        try #require(first.status == 0, "\(first.stdout)\(first.stderr)")
        _ = try await pkgtool("publish", v11.pkg, "--to", published)
        try damage?(published + "/\(Self.id)/1.1.pkg")
        let check = try await pkgtool("sync", catalog, "--check", "--documents", scratch.documents, "--json")
        let checked = (check.json["products"] as? [[String: Any]])?.first?["bytesToDownload"] as? Int
        let before = nginx.log(atLeast: 1).count
        let result = try await pkgtool("sync", catalog, "--documents", scratch.documents, "--json")
        let requests = nginx.log(atLeast: before + 1).dropFirst(before).filter { $0.path.hasSuffix("/1.1.pkg") }
        #expect(requests.allSatisfy { $0.status == 206 }, "\(requests)")
        let toc = try XarTableOfContents.read(v11.pkg)
        return Update(result: result, fetched: requests.reduce(0) { $0 + $1.bodyBytesSent },
                      packageSize: try FileManager.default.attributesOfItem(atPath: v11.pkg)[.size] as! Int,
                      storedSize: Int(toc.entry("Contents/" + newName)?.length ?? 0), contents: v11.contents, checked: checked, diffed: diffed)
    }

    func product(_ result: CommandResult) -> [String: Any] { (result.json["products"] as? [[String: Any]])?.first ?? [:] }

    /// Only versions, the record and the lock are left in the product folder.
    func expectTidy(sourceLocation: SourceLocation = #_sourceLocation) {
        for name in names(productFolder) where ContentVersion(name) == nil {
            #expect([".lock", "ContentInfo.plist"].contains(name), "unexpected \(name) in the product folder", sourceLocation: sourceLocation)
        }
    }

    func expectInstalled(_ update: Update, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(update.result.status == 0, "\(update.result.stdout)\(update.result.stderr)", sourceLocation: sourceLocation)
        #expect(product(update.result)["delta"] as? Bool == true, sourceLocation: sourceLocation)
        #expect(differences(productFolder + "/1.1", expected: snapshot(update.contents)).isEmpty, sourceLocation: sourceLocation)
        #expect(readRecord(productFolder)?.version == "1.1", sourceLocation: sourceLocation)
        #expect(update.checked == update.fetched, "sync --check said \(String(describing: update.checked)), sync fetched \(update.fetched)",
                sourceLocation: sourceLocation)
        #expect(update.diffed == update.fetched, "diff said \(String(describing: update.diffed)), sync fetched \(update.fetched)",
                sourceLocation: sourceLocation)
        expectTidy(sourceLocation: sourceLocation)
    }

    @Test func aChangeInPlaceFetchesTheChunksAroundIt() async throws {
        var changed = original
        changed.replaceSubrange(5_000_000 ..< 5_000_000 + (1 << 20), with: compressibleText(1 << 20, seed: 22))
        let update = try await update(to: changed)
        expectInstalled(update)
        // The changed MiB compressed, a chunk either side, header and TOC: a fraction of the file.
        #expect(update.fetched < update.storedSize / 4, "fetched \(update.fetched) of a file stored in \(update.storedSize)")
    }

    @Test func anInsertionNearTheStartFetchesTheInsertedChunks() async throws {
        var changed = original.prefix(300_000)
        changed.append(compressibleText(1 << 20, seed: 23))
        changed.append(original.dropFirst(300_000))
        let update = try await update(to: changed)
        expectInstalled(update)
        #expect(update.fetched < update.storedSize / 4, "fetched \(update.fetched) of a file stored in \(update.storedSize)")
    }

    @Test func aBundleRenamedByItsContentHashFetchesOnlyItsNewChunks() async throws {
        // As asset pipelines name bundles: a changed bundle is a renamed one.
        var changed = original
        changed.replaceSubrange(5_000_000 ..< 5_000_000 + (256 << 10), with: compressibleText(256 << 10, seed: 25))
        let update = try await update(to: changed, from: "bundles/5d1f0c9a.bundle", as: "bundles/e82b47d3.bundle")
        expectInstalled(update)
        #expect(update.fetched < update.storedSize / 4, "fetched \(update.fetched) of a file stored in \(update.storedSize)")
    }

    @Test func aChunkThatIsNotTheTablesIsRefusedAndNothingInstalled() async throws {
        var changed = original
        changed.replaceSubrange(5_000_000 ..< 5_000_000 + (1 << 20), with: compressibleText(1 << 20, seed: 24))
        // The server's copy of the file's data is damaged after the first 100 KiB (not the TOC,
        // which the catalog's tocSHA256 checks first).
        let update = try await update(to: changed) { path in
            let toc = try XarTableOfContents.read(path)
            let entry = try #require(toc.entry("Contents/assets/bundle.dat"))
            let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
            defer { try? handle.close() }
            let start = UInt64(toc.heapStart + entry.offset! + 100_000)
            try handle.seek(toOffset: start)
            let bytes = try handle.read(upToCount: Int(entry.length!) - 200_000) ?? Data()
            try handle.seek(toOffset: start)
            try handle.write(contentsOf: Data(bytes.map { $0 ^ 0x5A }))
        }
        #expect(update.result.status == 1, "\(update.result.stdout)\(update.result.stderr)")
        let result = product(update.result)
        #expect(result["status"] as? String == "refused")
        let codes = (result["diagnostics"] as? [[String: Any]] ?? []).compactMap { $0["code"] as? String }
        #expect(codes.contains("checksum-mismatch"), "\(result)")
        #expect(readRecord(productFolder)?.version == "1.0")
        #expect(!exists(productFolder + "/1.1"))
        #expect(differences(productFolder + "/1.0", expected: snapshot(scratch.path("src-v10/Contents"))).isEmpty)
        expectTidy()
    }
}
