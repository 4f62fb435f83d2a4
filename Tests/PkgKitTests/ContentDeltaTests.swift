import Crypto
import Foundation
@testable import PkgKit
@testable import PkgKitInstall
import Testing
import TestSupport

/// Deltas by content, not by path, through the in-memory transport: a changed bundle that was
/// renamed, split in two or merged from two takes its chunks from whichever installed file holds
/// them (`ChunkIndex`), and downloads only the chunks none holds; what `check` says it would
/// download is what the sync downloads. An index that no longer tells the truth costs a download,
/// never a wrong byte; it is kept beside the version folder and cut again only where files changed.
@Suite(.offThePool) struct ContentDeltaTests {
    static let id = "com.example.content"
    static let base = URL(string: "http://cdn.test/pub/")!
    let scratch: Scratch
    /// Two stretches of text, each large enough to be chunked on its own.
    let first = compressibleText(10 << 20, seed: 41)
    let second = compressibleText(5 << 20, seed: 42)

    init() throws {
        scratch = try Scratch()
    }

    var productFolder: String { scratch.documents + "/" + Self.id }
    var folder: ProductFolder { get throws { try #require(try ProductFolder.open(documents: scratch.documents, identifier: Self.id, create: false)) } }

    /// `data` with `count` bytes at `offset` replaced by other text.
    func edited(_ data: Data, at offset: Int, count: Int = 64 << 10, seed: UInt64 = 43) -> Data {
        var changed = data
        changed.replaceSubrange(offset ..< offset + count, with: compressibleText(count, seed: seed))
        return changed
    }

    /// A second after now, in nanoseconds: kept files and indexes leave nothing out as too recent.
    static let later: @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1e9) + 1_000_000_000 }

    /// What an update did: the sync's result, the bytes of 1.1.pkg the server sent, what `check`
    /// said beforehand, and the sum of the stored sizes of 1.1's files.
    struct Update {
        var result: ProductSyncResult
        var fetched: Int64
        var checked: Int64?
        var stored: Int64
        var contents: String
    }

    /// Publishes `package`.
    func publish(_ package: String) throws {
        try #require(try Publisher(destination: scratch.path("pub")).publish([package]).status == .published)
    }

    /// Syncs to the latest published version (or checks) through the in-memory transport; `cut`
    /// gathers how many installed files each delta read to bring its chunk index up to date.
    func run(check: Bool = false, cut: LockedValue<[Int]>? = nil) async throws -> (ProductSyncResult, ScriptedTransport) {
        let transport = ScriptedTransport(serving: scratch.path("pub"), base: Self.base)
        let client = SyncClient(catalogURL: Self.base.appendingPathComponent("catalog.json"), documents: scratch.documents, transport: transport)
        var options = SyncClient.Options(products: [Self.id], trust: .unsigned, retryPolicy: instantRetries,
                                         transferPolicy: TransferPolicy(clock: transport.clock))
        options.statCacheTime = Self.later
        if let cut { options.filesCut = { count in cut.withLock { $0.append(count) } } }
        let report = check ? try await client.check(options) : try await client.sync(options)
        return (try #require(report.products.first), transport)
    }

    /// Installs 1.0 holding `old`, then (after `prepare`) checks and syncs to 1.1 holding `new`.
    func update(from old: [String: Data], to new: [String: Data], prepare: (() throws -> Void)? = nil) async throws -> Update {
        let v10 = try scratch.package("v10", id: Self.id, version: "1.0", files: old)
        let v11 = try scratch.package("v11", id: Self.id, version: "1.1", files: new)
        try publish(v10.pkg)
        let (installed, _) = try await run()
        try #require(installed.status == .installed)
        try prepare?()
        try publish(v11.pkg)
        let (checked, _) = try await run(check: true)
        let (result, transport) = try await run()
        let fetched = transport.exchanges(for: "1.1.pkg").reduce(Int64(0)) { $0 + $1.bytesSent }
        let toc = try XarTableOfContents.read(v11.pkg)
        let stored = new.keys.reduce(Int64(0)) { $0 + (toc.entry("Contents/" + $1)?.length ?? 0) }
        return Update(result: result, fetched: fetched, checked: checked.bytesToDownload, stored: stored, contents: v11.contents)
    }

    /// Installed as a delta, byte-identical to 1.1, downloading what `check` said and less than a
    /// quarter of the changed files.
    func expectSmallDelta(_ update: Update, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(update.result.status == .installed && update.result.delta, "\(update.result)", sourceLocation: sourceLocation)
        #expect(differences(productFolder + "/1.1", expected: snapshot(update.contents)).isEmpty, sourceLocation: sourceLocation)
        #expect(update.fetched < update.stored / 4, "fetched \(update.fetched) of files stored in \(update.stored)", sourceLocation: sourceLocation)
        #expect(update.checked == update.fetched, "check said \(String(describing: update.checked)), sync fetched \(update.fetched)",
                sourceLocation: sourceLocation)
    }

    @Test func aRenamedBundleWithASmallChangeFetchesOnlyItsNewChunks() async throws {
        let update = try await update(from: ["bundles/3fa1c2.bundle": first, "readme.txt": Data("hi\n".utf8)],
                                      to: ["bundles/9b07e4.bundle": edited(first, at: 3 << 20), "readme.txt": Data("hi\n".utf8)])
        expectSmallDelta(update)
    }

    @Test func aBundleSplitInTwoTakesItsChunksFromTheOneItWas() async throws {
        var whole = first
        whole.append(second)
        let update = try await update(from: ["all.bundle": whole], to: ["a.bundle": first, "b.bundle": edited(second, at: 1 << 20)])
        expectSmallDelta(update)
    }

    @Test func twoBundlesMergedTakeTheirChunksFromBoth() async throws {
        var merged = edited(first, at: 2 << 20)
        merged.append(second)
        let update = try await update(from: ["a.bundle": first, "b.bundle": second], to: ["ab.bundle": merged])
        expectSmallDelta(update)
    }

    /// The 1.0 file `name`, as bytes.
    func installedBytes(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: productFolder + "/1.0/" + name)))
    }

    @Test func aChunkAlteredOnDiskUnderAnIndexThatStillVouchesForItIsFetchedInstead() async throws {
        // The index and the stat cache both describe the altered file as it is on disk (an edit
        // in the same clock tick as the indexing would leave them so), but the index's chunks are
        // those of the bytes before: every copied chunk is checked, and the ones that changed
        // are fetched instead.
        let update = try await update(from: ["old.bundle": first], to: ["new.bundle": edited(first, at: 3 << 20)]) {
            let product = try folder
            let candidate = ChunkIndex.Candidate(path: "old.bundle", identity: DeltaMachineryTests.identity(product, "old.bundle"), needsSHA1: false)
            let index = try ChunkIndex(version: "1.0", parameters: .standard)
                .refreshed(product, candidates: [candidate], minimumSize: 0, cancellation: nil).index
            var bytes = try installedBytes("old.bundle")
            for offset in stride(from: 7 << 20, to: (7 << 20) + (64 << 10), by: 4096) { bytes[offset] ^= 0x20 }
            let handle = try FileHandle(forUpdating: URL(fileURLWithPath: productFolder + "/1.0/old.bundle"))
            try handle.write(contentsOf: Data(bytes))
            try handle.close()
            try StatCacheTests.rewriteCache(product, now: Self.later())
            try Self.forge(index, as: product, "old.bundle")
        }
        #expect(update.result.status == .installed && update.result.delta, "\(update.result)")
        #expect(differences(productFolder + "/1.1", expected: snapshot(update.contents)).isEmpty)
        #expect(update.fetched < update.stored / 4, "fetched \(update.fetched) of \(update.stored)")
        let checked = try #require(update.checked)
        #expect(update.fetched > checked, "the check planned with the index's word; the sync fetched the altered chunks too")
        #expect(!FileManager.default.fileExists(atPath: productFolder + "/" + ChunkIndex.fileName("1.0")), "the lying index is dropped")
    }

    @Test func aChunkAlteredOnDiskIsCutAgainWhenItsFileNoLongerMatchesTheIndex() async throws {
        // The file changed after its index was kept (its identity shows it): it is cut again, and
        // the delta takes the chunks it still shares.
        let update = try await update(from: ["old.bundle": first], to: ["new.bundle": edited(first, at: 3 << 20)]) {
            let product = try folder
            let candidate = ChunkIndex.Candidate(path: "old.bundle", identity: DeltaMachineryTests.identity(product, "old.bundle"), needsSHA1: false)
            try ChunkIndex(version: "1.0", parameters: .standard)
                .refreshed(product, candidates: [candidate], minimumSize: 0, cancellation: nil).index.writeIfChanged(product, now: Self.later())
            var bytes = try installedBytes("old.bundle")
            bytes.replaceSubrange(0 ..< 65536, with: [UInt8](repeating: 0x41, count: 65536))
            try Data(bytes).write(to: URL(fileURLWithPath: productFolder + "/1.0/old.bundle"))
        }
        #expect(update.result.status == .installed && update.result.delta, "\(update.result)")
        #expect(differences(productFolder + "/1.1", expected: snapshot(update.contents)).isEmpty)
        #expect(update.fetched < update.stored / 4, "fetched \(update.fetched) of \(update.stored)")
    }

    /// Keeps `index` beside version 1.0 of `product` as if it had been cut from `path` as that file
    /// is now: the file's identity in it replaced by the one on disk.
    static func forge(_ index: ChunkIndex, as product: ProductFolder, _ path: String) throws {
        index.writeIfChanged(product, now: later())
        let name = product.path(ChunkIndex.fileName("1.0"))
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: name)))
        // After the magic line, three sizes, the file count, the path's length and the path.
        let identityAt = 22 + 24 + 4 + 4 + path.utf8.count
        let now = DeltaMachineryTests.identity(product, path)
        var identity: [UInt8] = []
        for value in [now.device, now.inode] { withUnsafeBytes(of: value.littleEndian) { identity += $0 } }
        withUnsafeBytes(of: now.mode.littleEndian) { identity += $0 }
        for value in [now.size, now.modified, now.changed] { withUnsafeBytes(of: UInt64(bitPattern: value).littleEndian) { identity += $0 } }
        bytes.replaceSubrange(identityAt ..< identityAt + identity.count, with: identity)
        bytes.removeLast(32)
        bytes += SHA256.hash(data: bytes)
        try Data(bytes).write(to: URL(fileURLWithPath: name))
        #expect(ChunkIndex.read(product, version: "1.0", parameters: .standard)?.files.first?.identity == now)
    }

    @Test func eachInstalledVersionKeepsItsIndexSoTheNextDeltaReadsNoFile() async throws {
        // 1.0 is downloaded whole and 1.1 comes as a delta: each version's index is made from
        // its package's chunk tables (and what 1.1 reused from 1.0), so neither delta after them
        // reads an installed file to find its chunks.
        let other = compressibleText(2 << 20, seed: 48)
        let v10 = try scratch.package("v10", id: Self.id, version: "1.0", files: ["a1.bundle": first, "b1.bundle": second, "small.bin": other])
        let v11 = try scratch.package("v11", id: Self.id, version: "1.1",
                                      files: ["a2.bundle": edited(first, at: 3 << 20), "b1.bundle": second, "small.bin": other])
        let v12 = try scratch.package("v12", id: Self.id, version: "1.2",
                                      files: ["a2.bundle": edited(first, at: 3 << 20), "b2.bundle": edited(second, at: 1 << 20), "small.bin": other])
        let cut = LockedValue<[Int]>([])
        try publish(v10.pkg)
        #expect(try await run(cut: cut).0.status == .installed)
        #expect(FileManager.default.fileExists(atPath: productFolder + "/" + ChunkIndex.fileName("1.0")))
        try publish(v11.pkg)
        let (to11, transport11) = try await run(cut: cut)
        #expect(to11.status == .installed && to11.delta)
        // The file rebuilt from chunks is recorded as it is once its scratch link is gone.
        var info = stat()
        try #require(stat(productFolder + "/1.1/a2.bundle", &info) == 0)
        #expect(StatCache.read(try folder, version: "1.1")?.entry("a2.bundle", matching: FileIdentity(info)) != nil)
        try publish(v12.pkg)
        let (to12, transport12) = try await run(cut: cut)
        #expect(to12.status == .installed && to12.delta)
        // small.bin (2 MiB, no chunk table: stored whole) is cut once, by the first delta; the
        // bundles never are.
        #expect(cut.current == [1, 0], "installed files read per delta")
        #expect(differences(productFolder + "/1.2", expected: snapshot(v12.contents)).isEmpty)
        for transport in [transport11, transport12] {
            let fetched = transport.exchanges.filter { $0.request.url.lastPathComponent.hasSuffix(".pkg") }.reduce(Int64(0)) { $0 + $1.bytesSent }
            #expect(fetched < 1 << 20, "fetched \(fetched)")
        }
    }

    @Test func aVersionInstalledByExtractKeepsItsIndexSoTheFirstSyncReadsNoFile() async throws {
        // An app that ships 1.0 installed by `extract` (or installs a package it was handed) and
        // then syncs: the index came with the install, so the first delta cuts no installed file.
        let v10 = try scratch.package("v10", id: Self.id, version: "1.0", files: ["a1.bundle": first, "b1.bundle": second])
        let v11 = try scratch.package("v11", id: Self.id, version: "1.1", files: ["a2.bundle": edited(first, at: 3 << 20), "b1.bundle": second])
        var extractOptions = InstallOptions()
        extractOptions.statCacheTime = Self.later
        try #require(try Installer(documents: scratch.documents).install(v10.pkg, options: extractOptions).status == .installed)
        let index = try #require(ChunkIndex.read(try folder, version: "1.0", parameters: .standard))
        #expect(Set(index.files.map(\.path)) == ["a1.bundle", "b1.bundle"])
        try publish(v11.pkg)
        let cut = LockedValue<[Int]>([])
        let (result, transport) = try await run(cut: cut)
        #expect(result.status == .installed && result.delta)
        #expect(cut.current == [0], "installed files read by the delta")
        #expect(differences(productFolder + "/1.1", expected: snapshot(v11.contents)).isEmpty)
        #expect(transport.exchanges(for: "1.1.pkg").reduce(Int64(0)) { $0 + $1.bytesSent } < 1 << 20)
    }

    @Test func installedFilesTheStatCacheLeftOutDoNotSetTheWholeVersionBeingCut() async throws {
        // 1.1 changes only a file stored whole (no chunk table), so no chunk is wanted. With the
        // stat cache gone, every installed file is unknown until it is read: the bundles, which
        // have tables, must not count as changed and have every large file cut for nothing.
        let noise = randomData(1 << 20)
        let other = compressibleText(2 << 20, seed: 48)
        let v10 = try scratch.package("v10", id: Self.id, version: "1.0", files: ["a.bundle": first, "small.bin": other, "noise.bin": noise])
        let v11 = try scratch.package("v11", id: Self.id, version: "1.1", files: ["a.bundle": first, "small.bin": other, "noise.bin": randomData(1 << 20)])
        try publish(v10.pkg)
        #expect(try await run().0.status == .installed)
        try FileManager.default.removeItem(atPath: productFolder + "/" + StatCache.fileName("1.0"))
        try publish(v11.pkg)
        let cut = LockedValue<[Int]>([])
        let (result, _) = try await run(cut: cut)
        #expect(result.status == .installed && result.delta)
        #expect(cut.current == [0], "installed files cut")
        #expect(differences(productFolder + "/1.1", expected: snapshot(v11.contents)).isEmpty)
    }

    // MARK: - The index on its own

    @Test func aKeptIndexIsNotCutAgainAndAChangedFileIs() throws {
        let s = try Scratch()
        let data = Array(pseudoRandomData(300_000, seed: 44))
        let product = try DeltaMachineryTests.installed(s, data)
        try s.write("Documents/\(DeltaMachineryTests.id)/1.0/other.bin", Array(pseudoRandomData(200_000, seed: 45)))
        let paths = ["big.bin", "other.bin"]
        let cut = try DeltaMachineryTests.index(product, paths)
        #expect(cut.filesRead == 2)
        cut.writeIfChanged(product, now: Self.later())
        let kept = try #require(ChunkIndex.read(product, version: "1.0", parameters: DeltaMachineryTests.small))
        #expect(kept.count == cut.count)
        #expect(try DeltaMachineryTests.index(product, paths, kept: kept).filesRead == 0, "a kept index is not read again")
        #expect(ChunkIndex.read(product, version: "1.0", parameters: .standard) == nil, "an index is for the sizes it was cut with")

        // other.bin changes: it alone is cut again, and its new chunks are found.
        let changed = Array(pseudoRandomData(200_000, seed: 46))
        try s.write("Documents/\(DeltaMachineryTests.id)/1.0/other.bin", changed)
        let again = try DeltaMachineryTests.index(product, paths, kept: kept)
        #expect(again.filesRead == 1)
        let range = try #require(DeltaMachineryTests.cut(changed, DeltaMachineryTests.small).first)
        #expect(again.locate(DeltaMachineryTests.digest(changed[range]))?.path == "other.bin")
        // A removed file's chunks go with it.
        try FileManager.default.removeItem(atPath: s.documents + "/\(DeltaMachineryTests.id)/1.0/big.bin")
        let gone = try DeltaMachineryTests.index(product, ["other.bin"], kept: again)
        #expect(gone.filesRead == 0 && gone.files.map(\.path) == ["other.bin"])
        let firstRange = try #require(DeltaMachineryTests.cut(data, DeltaMachineryTests.small).first)
        #expect(gone.locate(DeltaMachineryTests.digest(data[firstRange])) == nil)
    }

    @Test func aDamagedIndexIsNoIndex() throws {
        let s = try Scratch()
        let product = try DeltaMachineryTests.installed(s, Array(pseudoRandomData(100_000, seed: 47)))
        try DeltaMachineryTests.index(product).writeIfChanged(product, now: Self.later())
        let name = product.path(ChunkIndex.fileName("1.0"))
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: name)))
        #expect(ChunkIndex.read(product, version: "1.0", parameters: DeltaMachineryTests.small) != nil)
        bytes[60] ^= 1
        try Data(bytes).write(to: URL(fileURLWithPath: name))
        #expect(ChunkIndex.read(product, version: "1.0", parameters: DeltaMachineryTests.small) == nil)
        try Data(bytes.prefix(40)).write(to: URL(fileURLWithPath: name))
        #expect(ChunkIndex.read(product, version: "1.0", parameters: DeltaMachineryTests.small) == nil)
    }

    @Test func theIndexOfATwoGigabyteInstallFitsInSixteenMebibytes() throws {
        // A 2 GiB install cut at the standard sizes has a chunk per 256 KiB on average and at most
        // one per 64 KiB (the minimum): the worst case, 32,768 chunks, kept and read back.
        let files = 2_000, chunks = Int((Int64(2) << 30) / Int64(ChunkParameters.standard.minimumSize)) + files
        var bytes = Array("pkgtool-chunk-index 1\n".utf8)
        func put<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { bytes += $0 } }
        let standard = ChunkParameters.standard
        put(UInt64(standard.minimumSize)); put(UInt64(standard.averageSize)); put(UInt64(standard.maximumSize))
        put(UInt32(files))
        var made = 0
        for file in 0..<files {
            let path = "bundles/\(String(repeating: "f", count: 40))\(file).bundle"
            put(UInt32(path.utf8.count)); bytes += path.utf8
            put(UInt64(1)); put(UInt64(file)); put(UInt32(0o100644))
            for _ in 0..<3 { put(UInt64(1_000_000_000)) }
            let count = (chunks + files - 1) / files
            put(UInt32(count))
            for chunk in 0..<count {
                put(UInt64(made)); put(UInt64(made) &* 0x9E37_79B9_7F4A_7C15); put(UInt64(chunk << 16)); put(UInt32(1 << 16))
                made += 1
            }
        }
        bytes += SHA256.hash(data: bytes)
        let index = try #require(bytes.withUnsafeBytes { ChunkIndex.parse($0, version: "1.0", parameters: standard) })
        #expect(index.count == made && made >= 32_768)
        #expect(ChunkIndex.entryBytes == 32, "a whole 16-byte digest, an offset, a file and a length")
        #expect(index.memoryBytes <= 16 << 20, "\(index.memoryBytes) bytes")
        #expect(index.memoryBytes <= ChunkIndex.memoryLimit / 8, "\(index.memoryBytes) bytes: an eighth of the bound")
        // Every chunk is found where it was kept.
        #expect(index.locate(ChunkDigest(high: 7, low: UInt64(7) &* 0x9E37_79B9_7F4A_7C15))?.offset == Int64(7 << 16))
    }
}
