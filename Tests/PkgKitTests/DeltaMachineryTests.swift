import Crypto
import Foundation
@testable import PkgKit
import Testing
import TestSupport
@testable import PkgKitSync

/// The parts of a delta update on their own, with no socket: the sparse copy, an installed file
/// cut into chunks, a file rebuilt from chunks, the download steps on the scripted transport, and
/// the bounds on what a header, a chunk table or a plan may declare.
@Suite(.offThePool) struct DeltaMachineryTests {
    static let id = "com.example.machinery"
    static let base = URL(string: "http://cdn.test/pub/")!
    /// Small chunks, so that a file of a few hundred KiB has dozens of them.
    static let small = ChunkParameters(minimumSize: 1 << 10, averageSize: 4 << 10, maximumSize: 16 << 10)

    /// Where a writer cuts `data` with `parameters`.
    static func cut(_ data: [UInt8], _ parameters: ChunkParameters) -> [Range<Int>] {
        var chunker = ContentDefinedChunker(parameters)
        var ranges: [Range<Int>] = []
        var start = 0, taken = 0
        data.withUnsafeBytes { raw in
            while taken < raw.count {
                let (piece, ends) = chunker.scan(UnsafeRawBufferPointer(rebasing: raw[taken...]))
                taken += piece
                if ends { ranges.append(start ..< taken); start = taken }
            }
        }
        if start < data.count { ranges.append(start ..< data.count) }
        return ranges
    }

    static func digest(_ bytes: ArraySlice<UInt8>) -> ChunkDigest {
        var hasher = ChunkHasher()
        bytes.withUnsafeBytes { hasher.update($0) }
        return hasher.digest
    }

    /// A stored file's chunk table, as `create` writes it.
    static func table(_ data: [UInt8], _ parameters: ChunkParameters = small) -> ChunkTable {
        var table = ChunkTable(parameters: parameters, dataStart: 0)
        for range in cut(data, parameters) {
            table.append(ChunkTable.Chunk(digest: digest(data[range]), size: range.count, storedLength: range.count))
        }
        return table
    }

    /// A zlib file's chunk table and stored bytes, as `create` writes them: the stream fully
    /// flushed after every chunk, the first chunk's bytes after the stream's two-byte header.
    static func zlibTable(_ data: [UInt8], _ parameters: ChunkParameters = small) throws -> (table: ChunkTable, stored: [UInt8]) {
        let deflater = Deflater(level: 6)
        var stored: [UInt8] = []
        var table = ChunkTable(parameters: parameters, dataStart: 2)
        var start = 2
        for range in cut(data, parameters) {
            try data[range].withUnsafeBytes { try deflater.compress($0) { stored += $0 } }
            try deflater.flush { stored += $0 }
            table.append(ChunkTable.Chunk(digest: digest(data[range]), size: range.count, storedLength: stored.count - start))
            start = stored.count
        }
        try deflater.finish { stored += $0 }
        return (table, stored)
    }

    /// A product folder whose version 1.0 holds `big.bin` with `data`.
    static func installed(_ s: Scratch, _ data: [UInt8]) throws -> ProductFolder {
        try s.write("Documents/\(id)/1.0/big.bin", data)
        return try #require(try ProductFolder.open(documents: s.documents, identifier: id, create: false))
    }

    // MARK: - SparseCopy

    @Test func aSparseCopyHoldsWhatWasWrittenAndZerosElsewhere() throws {
        let s = try Scratch()
        let folder = open(s.root, O_RDONLY | O_DIRECTORY)
        defer { close(folder) }
        let copy = try SparseCopy(folder: folder, name: "copy", path: s.path("copy"), size: 1000)
        try copy.write(Data([1, 2, 3]), at: 10)
        try copy.write(Data([9]), at: 999)
        #expect(try copy.read(5, at: 9) == [0, 1, 2, 3, 0])
        #expect(try copy.read(10, at: 995) == [0, 0, 0, 0, 9], "fewer bytes at the end of the file")
        var buffer = [UInt8](repeating: 0xEE, count: 4)
        #expect(try buffer.withUnsafeMutableBytes { try copy.read(into: $0, at: 11) } == 4)
        #expect(buffer == [2, 3, 0, 0])
        var whole = [UInt8](repeating: 0, count: 1000)
        whole[10 ..< 13] = [1, 2, 3]
        whole[999] = 9
        #expect(try copy.sha256(ofFirst: 1000) == sha256Hex(Data(whole)))
        #expect(try copy.sha256(ofFirst: 12) == sha256Hex(Data(whole[0 ..< 12])))
    }

    // MARK: - ChunkIndex

    /// Who the file `path` of version 1.0 is on disk (zeros when it is not there).
    static func identity(_ folder: ProductFolder, _ path: String) -> FileIdentity {
        var info = stat()
        _ = fstatat(folder.descriptor, "1.0/" + path, &info, AT_SYMLINK_NOFOLLOW)
        return FileIdentity(info)
    }

    /// Version 1.0's files `paths` of `folder` cut with `parameters` into `kept` (a fresh index
    /// unless given).
    static func index(_ folder: ProductFolder, _ paths: [String] = ["big.bin"], parameters: ChunkParameters = small,
                      kept: ChunkIndex? = nil) throws -> ChunkIndex {
        let candidates = paths.map { ChunkIndex.Candidate(path: $0, identity: identity(folder, $0), needsSHA1: false) }
        return try (kept ?? ChunkIndex(version: "1.0", parameters: parameters))
            .refreshed(folder, candidates: candidates, minimumSize: 0, cancellation: nil).index
    }

    @Test func anInstalledFileIsCutWhereTheWriterCutsIt() throws {
        let s = try Scratch()
        let data = Array(pseudoRandomData(300_000, seed: 7))
        let folder = try Self.installed(s, data)
        let chunks = try Self.index(folder)
        let ranges = Self.cut(data, Self.small)
        #expect(ranges.count > 20)
        #expect(chunks.count == ranges.count)
        for range in ranges {
            #expect(chunks.locate(Self.digest(data[range])) == ChunkIndex.Location(path: "big.bin", offset: Int64(range.lowerBound), length: range.count))
        }
    }

    @Test func onlyARegularFileInsideTheVersionIsIndexed() throws {
        let s = try Scratch()
        let folder = try Self.installed(s, Array(pseudoRandomData(10_000, seed: 8)))
        try s.write("Documents/\(Self.id)/secret.bin", Data("outside".utf8))
        #expect(symlink("big.bin", s.documents + "/\(Self.id)/1.0/link.bin") == 0)
        for path in ["missing.bin", "../secret.bin", "link.bin", "/etc/passwd"] {
            #expect(try Self.index(folder, [path]).count == 0, "\(path)")
        }
    }

    // MARK: - ChunkAssembly

    /// 1.0's file, and 1.1's: 5,000 bytes changed in the middle and 20,000 appended.
    static func versions() -> (old: [UInt8], new: [UInt8]) {
        let old = Array(pseudoRandomData(400_000, seed: 11))
        var new = old
        new.replaceSubrange(200_000 ..< 205_000, with: Array(pseudoRandomData(5_000, seed: 12)))
        new += Array(pseudoRandomData(20_000, seed: 13))
        return (old, new)
    }

    /// The assembly of `new` stored (or, with `gzip`, a zlib stream) at `fileStart` of a sparse
    /// copy holding only its fetched chunks.
    static func assembly(_ s: Scratch, folder: ProductFolder, new: [UInt8], fileStart: Int64, gzip: Bool = false) throws -> (ChunkAssembly, SparseCopy) {
        let index = try index(folder)
        let (table, stored) = gzip ? try zlibTable(new) : (table(new), new)
        let assembly = ChunkAssembly(order: 3, path: ArchivePath("Contents/big.bin"), size: Int64(new.count),
                                     sha1: SHA1Value(Insecure.SHA1.hash(data: new)), table: table, gzip: gzip,
                                     fileStart: fileStart, index: index)
        let scratch = open(s.root, O_RDONLY | O_DIRECTORY)
        defer { close(scratch) }
        let copy = try SparseCopy(folder: scratch, name: "copy", path: s.path("copy"), size: fileStart + Int64(stored.count))
        for range in assembly.fetchRanges {
            try copy.write(Data(stored[Int(range.lowerBound - fileStart) ..< Int(range.upperBound - fileStart)]), at: range.lowerBound)
        }
        return (assembly, copy)
    }

    @Test(arguments: [false, true])
    func aFileIsRebuiltFromTheInstalledChunksAndTheFetchedOnes(gzip: Bool) throws {
        let s = try Scratch()
        let (old, new) = Self.versions()
        let folder = try Self.installed(s, old)
        let (assembly, copy) = try Self.assembly(s, folder: folder, new: new, fileStart: 1_000, gzip: gzip)
        let fetched = assembly.fetchRanges.reduce(0) { $0 + $1.count }
        #expect(fetched >= 25_000 && fetched < 80_000, "only the chunks around the change and the new tail: \(fetched)")
        #expect(assembly.fetchedChunks < assembly.table.count / 4)
        let files = try ChunkAssembly.assembleAll([assembly], from: copy, folder: folder, scratchName: ".chunks", url: "v.pkg", cancellation: nil)
        let rebuilt = try #require(files[ArchivePath("Contents/big.bin")])
        #expect(rebuilt.sha1 == assembly.sha1)
        #expect(FileManager.default.contents(atPath: folder.path(".chunks/3")) == Data(new))
    }

    @Test(arguments: [false, true])
    func aFetchedChunkThatIsNotTheTablesIsRefused(gzip: Bool) throws {
        let s = try Scratch()
        let (old, new) = Self.versions()
        let folder = try Self.installed(s, old)
        let (assembly, copy) = try Self.assembly(s, folder: folder, new: new, fileStart: 0, gzip: gzip)
        let range = try #require(assembly.fetchRanges.first)
        let byte = try copy.read(1, at: range.lowerBound)[0]
        try copy.write(Data([byte ^ 0xFF]), at: range.lowerBound)
        #expect(throws: ChunkMismatch.self) {
            _ = try ChunkAssembly.assembleAll([assembly], from: copy, folder: folder, scratchName: ".chunks", url: "v.pkg", cancellation: nil)
        }
    }

    @Test func chunksAnInstalledFileNoLongerHoldsAreNamedAndFetchedInstead() throws {
        let s = try Scratch()
        let (old, new) = Self.versions()
        let folder = try Self.installed(s, old)
        var (assembly, copy) = try Self.assembly(s, folder: folder, new: new, fileStart: 0)
        var edited = old
        edited[10] ^= 0xFF
        edited[300_000] ^= 0xFF
        try s.write("Documents/\(Self.id)/1.0/big.bin", edited)
        var stale: StaleChunks?
        #expect(throws: StaleChunks.self) {
            do {
                _ = try ChunkAssembly.assembleAll([assembly], from: copy, folder: folder, scratchName: ".chunks", url: "v.pkg", cancellation: nil)
            } catch let error as StaleChunks {
                stale = error
                throw error
            }
        }
        let chunks = try #require(stale?.chunks[assembly.order])
        #expect(chunks.count == 2, "the chunk holding byte 10 and the one holding byte 300,000: \(chunks)")
        #expect(names(folder.path(".chunks")).isEmpty, "nothing is left written")
        // Fetched instead, the file is rebuilt whole and right.
        for range in assembly.fetchInstead(chunks) {
            try copy.write(Data(new[Int(range.lowerBound) ..< Int(range.upperBound)]), at: range.lowerBound)
        }
        _ = try ChunkAssembly.assembleAll([assembly], from: copy, folder: folder, scratchName: ".chunks", url: "v.pkg", cancellation: nil)
        #expect(FileManager.default.contents(atPath: folder.path(".chunks/3")) == Data(new))
    }

    // MARK: - Chunk tables and headers: bounds checked before anything is allocated

    static func declared(count: Int64, maximum: Int64 = 16 << 10) -> ChunkTable.Declared {
        ChunkTable.Declared(style: ChunkTable.style, minimumSize: 1 << 10, averageSize: 4 << 10, maximumSize: maximum, dataStart: 2, count: count)
    }

    static func record(size: UInt32, stored: UInt32) -> [UInt8] {
        [UInt8](repeating: 0xAB, count: 16) + withUnsafeBytes(of: size.bigEndian, Array.init) + withUnsafeBytes(of: stored.bigEndian, Array.init)
    }

    @Test func aChunkTableDeclaringTooMuchIsIgnored() {
        // Ten million chunks: refused on the count alone, before the text is decoded.
        #expect(Self.declared(count: 10_000_000).textLimit == nil)
        let text = Array(Data(Self.record(size: 4096, stored: 4000)).base64EncodedString().utf8)
        #expect(ChunkTable(declared: Self.declared(count: 10_000_000), text: text, size: 4096, length: 5000, gzip: true) == nil)
        // A 1 TiB chunk size.
        #expect(ChunkTable(declared: Self.declared(count: 1, maximum: 1 << 40), text: text, size: 4096, length: 5000, gzip: true) == nil)
        // A chunk whose stored bytes could not be deflate's output for its size (4 GiB).
        let huge = Array(Data(Self.record(size: 4096, stored: .max)).base64EncodedString().utf8)
        #expect(ChunkTable(declared: Self.declared(count: 1), text: huge, size: 4096, length: Int64(UInt32.max) + 2, gzip: true) == nil)
        let bound = UInt32(ChunkTable.maxStoredLength(size: 4096))
        let atBound = Array(Data(Self.record(size: 4096, stored: bound)).base64EncodedString().utf8)
        #expect(ChunkTable(declared: Self.declared(count: 1), text: atBound, size: 4096, length: Int64(bound) + 2, gzip: true) != nil)
        let overBound = Array(Data(Self.record(size: 4096, stored: bound + 1)).base64EncodedString().utf8)
        #expect(ChunkTable(declared: Self.declared(count: 1), text: overBound, size: 4096, length: Int64(bound) + 3, gzip: true) == nil)
    }

    /// A header with these TOC lengths.
    static func header(compressed: UInt64, uncompressed: UInt64) -> [UInt8] {
        XarHeader.magic + [0, 28, 0, 1] + withUnsafeBytes(of: compressed.bigEndian, Array.init)
            + withUnsafeBytes(of: uncompressed.bigEndian, Array.init) + [0, 0, 0, 1]
    }

    @Test func aHeaderDeclaringAHugeTableOfContentsIsRefused() throws {
        #expect(try XarHeader.parse(Self.header(compressed: 1000, uncompressed: 5000)).anchoredBytes == 0 ..< 1028)
        for (compressed, uncompressed) in [(UInt64(1) << 40, UInt64(5000)), (1000, 1 << 40), (.max, .max)] {
            #expect(throws: XarTOCError.limitPassed(.declaredLength(max(compressed, uncompressed)))) {
                try XarHeader.parse(Self.header(compressed: compressed, uncompressed: uncompressed))
            }
        }
        #expect(throws: XarTOCError.malformed("the file is shorter than a xar header")) { try XarHeader.parse(Self.header(compressed: 1, uncompressed: 1).prefix(27)) }

        // The reader refuses such a package with the limit's words, reading nothing past the header.
        let s = try Scratch()
        let path = try s.write("huge.pkg", Self.header(compressed: 1 << 40, uncompressed: 1 << 41) + [UInt8](repeating: 0, count: 100))
        #expect(throws: XarTOCError.limitPassed(.declaredLength(1 << 41))) { try XarTableOfContents.read(path) }
        #expect(XarTOCError.limitPassed(.declaredLength(1 << 41)).diagnostic.code == .unreadableArchive)
        #expect(XarTOCError.limitPassed(.declaredLength(1 << 41)).description.contains("its header declares 2199023255552 bytes, more than 512 MiB"))
    }

    // MARK: - DeltaPlan: what a delta may fetch

    @Test func rangesAShortGapApartAreFetchedAsOne() {
        let gap = DeltaPlan.mergeGap
        #expect(DeltaPlan.merge([100 ..< 200, 0 ..< 50, 50 ..< 60]) == [0 ..< 200])
        #expect(DeltaPlan.merge([100 ..< 200, 0 ..< 50, 50 ..< 60], gap: 0) == [0 ..< 60, 100 ..< 200])
        #expect(DeltaPlan.merge([0 ..< 10, 10 + gap ..< 20 + gap]) == [0 ..< 10, 10 + gap ..< 20 + gap], "a gap of mergeGap bytes is not fetched")
        #expect(DeltaPlan.merge([0 ..< 10, 9 + gap ..< 20 + gap]) == [0 ..< 20 + gap])
        #expect(DeltaPlan.merge([0 ..< 10, 5 ..< 8], gap: 0) == [0 ..< 10])
    }

    /// `count` changed files of 100 bytes, `spacing` bytes apart in the heap.
    static func changedFiles(_ count: Int, spacing: Int64, digested: Bool = true) -> [DeltaPlan.WantedFile] {
        (0 ..< count).map { index in
            DeltaPlan.WantedFile(order: index, path: ArchivePath("Contents/f\(index).bin"), size: 100, offset: Int64(index) * spacing,
                                 length: 100, sha1: SHA1Value(Insecure.SHA1.hash(data: Data("\(index)".utf8))), digested: digested)
        }
    }

    @Test func aPlanNeverTakesBytesNothingVouchesForOrTooManyRequests() throws {
        let s = try Scratch()
        let folder = try Self.installed(s, [1, 2, 3])
        let installed = try InstalledTree.scan(folder, version: "1.0")
        let size: Int64 = 1 << 40
        // Files close together: one request for all of them.
        let close = try DeltaPlan.make(wanted: Self.changedFiles(5_000, spacing: 1_000), heapStart: 0, packageSize: size, installed: installed)
        #expect(close.fetch.count == 1 && close.fetchedFiles == 5_000)
        // Far apart: a request each, up to the bound; past it, the package whole.
        let far = DeltaPlan.mergeGap + 100
        #expect(try DeltaPlan.make(wanted: Self.changedFiles(DeltaPlan.maxRanges, spacing: far), heapStart: 0, packageSize: size,
                                   installed: installed).fetch.count == DeltaPlan.maxRanges)
        #expect(throws: DeltaPlan.WholeDownload.tooManyRanges(DeltaPlan.maxRanges + 1)) {
            try DeltaPlan.make(wanted: Self.changedFiles(DeltaPlan.maxRanges + 1, spacing: far), heapStart: 0, packageSize: size, installed: installed)
        }
        // One file with no checksum among verified ones: the package whole, naming it.
        var files = Self.changedFiles(10, spacing: 1_000)
        files[7].digested = false
        #expect(throws: DeltaPlan.WholeDownload.unverifiedFile(ArchivePath("Contents/f7.bin"))) {
            try DeltaPlan.make(wanted: files, heapStart: 0, packageSize: size, installed: installed)
        }
        #expect(DeltaPlan.WholeDownload.unverifiedFile(ArchivePath("x")).reason == .unverifiedFile)
        // A file with no data is not fetched, checksum or not.
        files[7].length = 0
        #expect(try DeltaPlan.make(wanted: files, heapStart: 0, packageSize: size, installed: installed).fetchedFiles == 9)
    }

    // MARK: - DeltaDownload on the scripted transport

    /// A published package, its catalog entry, and a transport serving the folder.
    static func served(_ s: Scratch, alter: (@Sendable (HTTPRequest, ScriptedTransport.Reply) -> ScriptedTransport.Reply)? = nil)
        throws -> (entry: CatalogVersion, transport: ScriptedTransport, url: URL) {
        var files: [String: Data] = ["big.bin": pseudoRandomData(200_000, seed: 21)]
        for index in 0 ..< 5 { files["p\(index).txt"] = Data("page \(index)\n".utf8) }
        let package = try s.package("v", id: id, version: "1.1", files: files)
        try FileManager.default.createDirectory(atPath: s.path("pub/\(id)"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: package.pkg, toPath: s.path("pub/\(id)/1.1.pkg"))
        let digest = try PackageDigest.compute(package.pkg, xar: true)
        let entry = CatalogVersion(contentVersion: try #require(ContentVersion("1.1")), url: "\(id)/1.1.pkg", size: digest.size,
                                   sha256: digest.sha256, tocSHA256: digest.tocSHA256, fileCount: 6, payloadBytes: 200_040)
        let transport = ScriptedTransport(serving: s.path("pub"), base: base, alter: alter)
        return (entry, transport, base.appendingPathComponent("\(id)/1.1.pkg"))
    }

    func download(_ url: URL, _ entry: CatalogVersion, _ transport: ScriptedTransport, retry: RetryPolicy = instantRetries) -> DeltaDownload {
        DeltaDownload(url: url, entry: entry, transport: transport, retryPolicy: retry, transferPolicy: TransferPolicy(clock: transport.clock))
    }

    func copy(_ s: Scratch, size: Int64) throws -> SparseCopy {
        let folder = open(s.root, O_RDONLY | O_DIRECTORY)
        defer { close(folder) }
        return try SparseCopy(folder: folder, name: "copy", path: s.path("copy"), size: size)
    }

    @Test func theTableOfContentsIsFetchedByRangeAndChecked() async throws {
        let s = try Scratch()
        let (entry, transport, url) = try Self.served(s)
        let copy = try copy(s, size: entry.size)
        let received = ByteCounter()
        let found = try await download(url, entry, transport).fetchTableOfContents(into: copy, acceptWhole: false, received: received,
                                                                                   limits: PackageLimits(), progress: nil)
        guard case .ready(let toc, let files, let fetched, _) = found else { Issue.record("\(found)"); return }
        #expect(files.filter { $0.path.isInsideContents }.count == 6 && files.allSatisfy(\.digested))
        #expect(fetched == DeltaDownload.firstRequestBytes && received.value == fetched)
        #expect(transport.exchanges.map(\.request.range) == [ByteRange(0 ..< DeltaDownload.firstRequestBytes)])
        #expect(toc.heapStart < fetched)

        // Step two fetches what a plan names, into the same copy.
        let big = try #require(files.first { $0.path.string == "Contents/big.bin" })
        let start = toc.heapStart + big.offset!
        try await download(url, entry, transport).fetchRanges([start ..< start + big.length!], into: copy, received: received, progress: nil)
        let original = try Data(contentsOf: URL(fileURLWithPath: s.path("pub/\(Self.id)/1.1.pkg")))
        #expect(Data(try copy.read(Int(big.length!), at: start)) == original[Int(start) ..< Int(start + big.length!)])
    }

    @Test func aTableOfContentsThatIsNotTheCatalogsIsRefused() async throws {
        let s = try Scratch()
        var (entry, transport, url) = try Self.served(s)
        entry.tocSHA256 = String(repeating: "0", count: 64)
        let copy = try copy(s, size: entry.size)
        await #expect(throws: DownloadError.self) {
            _ = try await download(url, entry, transport).fetchTableOfContents(into: copy, acceptWhole: false, received: ByteCounter(),
                                                                               limits: PackageLimits(), progress: nil)
        }
    }

    @Test func aServerIgnoringRangeIsDroppedAtOnceWhenTheWholeIsNotWanted() async throws {
        let s = try Scratch()
        let (entry, _, url) = try Self.served(s)
        let copy = try copy(s, size: entry.size)
        let served = ScriptedTransport(serving: s.path("pub"), base: Self.base) { request, reply in
            reply.head?.statusCode == 206 ? ScriptedTransport.Reply(head: HTTPResponseHead(statusCode: 200, contentLength: entry.size),
                                                                    steps: [.bytes(Data(count: Int(entry.size)))]) : reply
        }
        let found = try await download(url, entry, served).fetchTableOfContents(into: copy, acceptWhole: false, received: ByteCounter(),
                                                                                limits: PackageLimits(), progress: nil)
        guard case .whole(downloaded: false) = found else { Issue.record("\(found)"); return }
        #expect(served.exchanges.count == 1 && served.exchanges[0].bytesSent < entry.size)
    }

    @Test func aHeaderDeclaringAHugeTableOfContentsIsNoDelta() async throws {
        let s = try Scratch()
        let (entry, _, url) = try Self.served(s)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: s.path("pub/\(Self.id)/1.1.pkg")))
        bytes.replaceSubrange(8 ..< 16, with: withUnsafeBytes(of: (UInt64(1) << 40).bigEndian, Array.init))
        try bytes.write(to: URL(fileURLWithPath: s.path("pub/\(Self.id)/1.1.pkg")))
        var changed = entry
        (changed.sha256, changed.tocSHA256) = (sha256Hex(bytes), sha256Hex(bytes))
        let transport = ScriptedTransport(serving: s.path("pub"), base: Self.base)
        let found = try await download(url, changed, transport).fetchTableOfContents(into: copy(s, size: entry.size), acceptWhole: false,
                                                                                     received: ByteCounter(), limits: PackageLimits(), progress: nil)
        guard case .notApplicable = found else { Issue.record("\(found)"); return }
        #expect(transport.exchanges.count == 1, "nothing fetched past the first request")
    }

    /// Every range fails its first attempt: with the budget shared by the whole delta, the
    /// download stops after `maximumTotalAttempts` requests in all, not that many per range.
    @Test func aDeltaHasOneRetryBudgetForAllItsRanges() async throws {
        let s = try Scratch()
        let (entry, url, transport) = try Self.failingEachRangeOnce(s)
        let ranges = (0 ..< 10).map { Int64($0) * 10_000 ..< Int64($0) * 10_000 + 100 }
        let copy = try copy(s, size: entry.size)
        await #expect(throws: TransportError.self) {
            try await download(url, entry, transport, retry: Self.policy).fetchRanges(ranges, into: copy, received: ByteCounter(), progress: nil)
        }
        #expect(transport.exchanges.count == 7, "\(transport.exchanges.map(\.request.range))")
        // Each range alone would have passed: one failure, then success.
        let alone = download(url, entry, transport, retry: Self.policy)
        try await alone.fetchRanges([90_000 ..< 90_100], into: copy, received: ByteCounter(), progress: nil)
    }

    /// The deltas of one sync draw on one budget too (`ServerKnowledge.retryBudget`): what one
    /// product's ranges spent is not given back to the next product's.
    @Test func theDeltasOfOneSyncShareOneRetryBudget() async throws {
        let s = try Scratch()
        let (entry, url, transport) = try Self.failingEachRangeOnce(s)
        let server = ServerKnowledge(catalogURL: URL(string: "https://example.com/catalog.json")!)
        let copy = try copy(s, size: entry.size)
        var first = download(url, entry, transport, retry: Self.policy)
        first.retryBudget = server.retryBudget
        // Three ranges, each failing once: six attempts of the seven.
        try await first.fetchRanges((0 ..< 3).map { Int64($0) * 10_000 ..< Int64($0) * 10_000 + 100 }, into: copy,
                                    received: ByteCounter(), progress: nil)
        #expect(server.retryBudget.attempts == 6)
        var second = download(url, entry, transport, retry: Self.policy)
        second.retryBudget = server.retryBudget
        await #expect(throws: TransportError.self) {
            try await second.fetchRanges([50_000 ..< 50_100], into: copy, received: ByteCounter(), progress: nil)
        }
        #expect(transport.exchanges.count == 7, "\(transport.exchanges.map(\.request.range))")
    }

    /// Four attempts a range, seven in all: what the two budget tests retry with.
    static let policy = RetryPolicy(maximumAttempts: 4, maximumTotalAttempts: 7, initialDelay: 0, maximumDelay: 0, jitter: 0)

    /// A published 1.1 whose server fails the first attempt at every range.
    static func failingEachRangeOnce(_ s: Scratch) throws -> (CatalogVersion, URL, ScriptedTransport) {
        let (entry, _, url) = try served(s)
        let tried = TriedRanges()
        let transport = ScriptedTransport(serving: s.path("pub"), base: base) { request, reply in
            guard let lower = request.range?.lowerBound, tried.first(lower) else { return reply }
            return ScriptedTransport.Reply(head: nil, steps: [.fail(.connectionLost(url: request.url.absoluteString, "reset"))])
        }
        return (entry, url, transport)
    }
}

/// Which range starts were asked for already, for a server that fails each range's first attempt.
final class TriedRanges: @unchecked Sendable {
    private let lock = NSLock()
    private var seen: Set<Int64> = []

    /// True the first time `start` is asked for.
    func first(_ start: Int64) -> Bool { lock.withLock { seen.insert(start).inserted } }
}
