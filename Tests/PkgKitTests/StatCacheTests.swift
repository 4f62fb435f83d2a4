import Foundation
@testable import PkgKit
@testable import PkgKitInstall
import Testing
import TestSupport

/// The stat cache an install writes beside each version folder (`.index-<version>`): trusted for a
/// file only while the file is exactly who it was, so that an installed file edited after install
/// is never reused by a delta, even when the edit keeps its size and modification time.
@Suite(.offThePool) struct StatCacheTests {
    static let id = "com.example.cache"
    let scratch: Scratch
    let v10: (pkg: String, contents: String)

    init() throws {
        scratch = try Scratch()
        v10 = try scratch.package("v10", id: Self.id, version: "1.0",
                                  files: ["kept.bin": pseudoRandomData(200_000, seed: 1), "edited.txt": Data("the original words\n".utf8)])
        try #require(try Installer(documents: scratch.documents).install(v10.pkg).status == .installed)
    }

    var folder: ProductFolder { get throws { try #require(try ProductFolder.open(documents: scratch.documents, identifier: Self.id, create: false)) } }

    /// The install's cache written again as if a second later: every entry in, none racy.
    static func rewriteCache(_ product: ProductFolder, sha1: [String: String]? = nil,
                             now: Int64 = Int64(Date().timeIntervalSince1970 * 1e9) + 1_000_000_000) throws {
        let installed = try InstalledTree.scan(product, version: "1.0")
        let files = installed.files.map {
            (path: $0.relativePath, sha1: sha1?[$0.relativePath].flatMap(SHA1Value.init(hex:)) ?? $0.sha1, executable: $0.executable)
        }
        StatCache.write(product, version: "1.0", files: files, now: now)
    }

    @Test func anInstallWritesACacheTheNextScanTrusts() throws {
        let product = try folder
        #expect(FileManager.default.fileExists(atPath: scratch.documents + "/\(Self.id)/.index-1.0"))
        // A sha1 that is not the file's: taken as it is, which proves the file was not read.
        try Self.rewriteCache(product, sha1: ["kept.bin": String(repeating: "a", count: 40)])
        let tree = try InstalledTree.scan(product, version: "1.0", cache: StatCache.read(product, version: "1.0"))
        #expect(tree.files.first { $0.relativePath == "kept.bin" }?.sha1.hexString == String(repeating: "a", count: 40))
    }

    @Test func anEditThatKeepsSizeAndModificationTimeIsStillSeen() throws {
        let product = try folder
        try Self.rewriteCache(product)
        let path = scratch.documents + "/\(Self.id)/1.0/edited.txt"
        var before = stat()
        try #require(stat(path, &before) == 0)
        // Same length, other bytes; then the modification time put back as it was.
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.write(contentsOf: Data("THE EDITED WORDS!!\n".utf8))
        try handle.close()
        var times = [before.st_atim, before.st_mtim]
        try #require(utimensat(AT_FDCWD, path, &times, 0) == 0)
        var after = stat()
        try #require(stat(path, &after) == 0)
        #expect(after.st_size == before.st_size && after.st_mtim.tv_sec == before.st_mtim.tv_sec && after.st_mtim.tv_nsec == before.st_mtim.tv_nsec)

        let cache = try #require(StatCache.read(product, version: "1.0"))
        let tree = try InstalledTree.scan(product, version: "1.0", cache: cache)
        let edited = try #require(tree.files.first { $0.relativePath == "edited.txt" })
        #expect(edited.sha1.hexString == sha1Hex(Data("THE EDITED WORDS!!\n".utf8)), "read again, not taken from the cache")
        #expect(cache.entries["edited.txt"]?.sha1.hexString == sha1Hex(Data("the original words\n".utf8)))
    }

    @Test func entriesTooCloseToTheWritingAreLeftOut() throws {
        let product = try folder
        let installed = try InstalledTree.scan(product, version: "1.0")
        // Within the margin of the oldest file, so of every file, however long the install took.
        let oldest = installed.files.map { max($0.identity.changed, $0.identity.modified) }.min() ?? 0
        let files = installed.files.map { (path: $0.relativePath, sha1: $0.sha1, executable: $0.executable) }
        StatCache.write(product, version: "1.0", files: files, now: oldest + StatCache.racyMargin / 2)
        #expect(StatCache.read(product, version: "1.0")?.entries.isEmpty == true)
    }

    @Test func aDamagedCacheIsIgnoredWhole() throws {
        let product = try folder
        try Self.rewriteCache(product)
        let path = scratch.documents + "/\(Self.id)/.index-1.0"
        var text = try String(contentsOfFile: path, encoding: .utf8)
        text = text.replacingOccurrences(of: "\t", with: "\t0", options: [], range: text.range(of: "\t"))
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        #expect(StatCache.read(product, version: "1.0") == nil)
    }

    /// The cache is written through a buffer a few hundred kilobytes long, its files stat'ed a
    /// batch at a time on several threads: one for more files than a batch fills the buffer
    /// several times over and must still read whole, every file in it with its own line.
    @Test func aCacheLongerThanItsWritingBufferReadsWhole() throws {
        let product = try folder
        let names = (0..<(StatCache.batchSize + StatCache.chunkSize + 7)).map { "many/\($0 % 3)/file-\($0).txt" }
        for name in names { try scratch.write("Documents/\(Self.id)/1.0/" + name, Data(name.utf8)) }
        let files = names.map { (path: $0, sha1: SHA1Value(hex: sha1Hex(Data($0.utf8)))!, executable: ExecutableFormat?.none) }
        let missing = (path: "missing.txt", sha1: SHA1Value(hex: String(repeating: "0", count: 40))!, executable: ExecutableFormat?.none)
        StatCache.write(product, version: "1.0", files: files + [missing],
                        now: Int64(Date().timeIntervalSince1970 * 1e9) + 1_000_000_000)
        let bytes = try #require(scratch.size("Documents/\(Self.id)/.index-1.0"))
        #expect(bytes > 256 << 10, "the cache fits its buffer: \(bytes) bytes")
        let cache = try #require(StatCache.read(product, version: "1.0"))
        #expect(cache.entries.count == names.count, "a file that is not there is left out, every other one kept")
        let onDisk = try InstalledTree.identities(product, version: "1.0")
        for name in names { #expect(cache.entry(name, matching: try #require(onDisk[name]))?.sha1.hexString == sha1Hex(Data(name.utf8))) }
    }

    @Test func aDeltaNeverReusesAFileEditedAfterInstall() async throws {
        // 1.1 keeps both files as they were in 1.0 and adds one; the installed copy of one of them
        // is edited (same size, same modification time) before the update.
        let v11 = try scratch.package("v11", id: Self.id, version: "1.1",
                                      files: ["kept.bin": pseudoRandomData(200_000, seed: 1), "edited.txt": Data("the original words\n".utf8),
                                              "added.bin": pseudoRandomData(150_000, seed: 2)])
        try Self.rewriteCache(try folder)
        let path = scratch.documents + "/\(Self.id)/1.0/edited.txt"
        var before = stat()
        try #require(stat(path, &before) == 0)
        try Data("THE EDITED WORDS!!\n".utf8).write(to: URL(fileURLWithPath: path))
        var times = [before.st_atim, before.st_mtim]
        try #require(utimensat(AT_FDCWD, path, &times, 0) == 0)

        let result = try await sync(v11.pkg)
        #expect(result.status == .installed && result.delta)
        #expect(result.filesDownloaded == 2, "added.bin and the edited file; kept.bin reused")
        #expect(differences(scratch.documents + "/\(Self.id)/1.1", expected: snapshot(v11.contents)).isEmpty)
    }

    @Test func aDeltaRecordsItsFilesAsTheyAreOnceTheOldVersionIsGone() async throws {
        // kept.bin is linked from 1.0, whose removal (`--keep 1`) then changes it (its link
        // count, so its change time): an entry written before that removal would never match again.
        let v11 = try scratch.package("v11", id: Self.id, version: "1.1",
                                      files: ["kept.bin": pseudoRandomData(200_000, seed: 1), "added.bin": pseudoRandomData(150_000, seed: 2)])
        // Written as if a second later, so that no entry is left out as too recent.
        let result = try await sync(v11.pkg, keep: 1, statCacheTime: { Int64(Date().timeIntervalSince1970 * 1e9) + 1_000_000_000 })
        #expect(result.status == .installed && result.delta && result.filesDownloaded == 1)
        let product = try folder
        #expect(try product.versionFolders() == ["1.1"])
        let cache = try #require(StatCache.read(product, version: "1.1"))
        let onDisk = try InstalledTree.identities(product, version: "1.1")
        #expect(Set(cache.entries.keys) == ["kept.bin", "added.bin"])
        for (path, entry) in cache.entries {
            #expect(entry.identity == onDisk[path], "\(path): the cache describes the file as it is")
        }
    }

    /// Publishes `package` and syncs the product to it through the in-memory transport.
    func sync(_ package: String, keep: Int? = nil, statCacheTime: (@Sendable () -> Int64)? = nil) async throws -> ProductSyncResult {
        try #require(try Publisher(destination: scratch.path("pub")).publish([package]).status == .published)
        let base = URL(string: "http://cdn.test/pub/")!
        let transport = ScriptedTransport(serving: scratch.path("pub"), base: base)
        let client = SyncClient(catalogURL: base.appendingPathComponent("catalog.json"), documents: scratch.documents, transport: transport)
        var options = SyncClient.Options(products: [Self.id], trust: .unsigned, keep: keep, retryPolicy: instantRetries,
                                         transferPolicy: TransferPolicy(clock: transport.clock))
        options.statCacheTime = statCacheTime
        return try #require(try await client.sync(options).products.first)
    }
}
