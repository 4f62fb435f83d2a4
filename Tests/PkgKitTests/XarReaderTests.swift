import Crypto
import Foundation
import Testing
import TestSupport
@testable import PkgKit
@testable import PkgKitArchive

/// pkgtool's own xar reader against libarchive's, on the same files: the same entries, modes,
/// link targets and bytes, and the same verdict on damage. Packages it leaves to libarchive
/// (other encodings, hard links) still read.
@Suite(.libArchive) struct XarReaderTests {
    /// Everything a reader yields, data hashed: what two readers must agree on.
    struct Seen: Equatable, CustomStringConvertible {
        var path: String
        var kind: EntryKind
        var mode: UInt32
        var link: [UInt8]?
        var sha1: String?
        var description: String { "\(path) \(kind) \(String(mode, radix: 8)) \(sha1 ?? "-")" }
    }

    static func read(_ reader: PackageReader) throws -> [Seen] {
        var seen: [Seen] = []
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 16)
        defer { buffer.deallocate() }
        while let entry = try reader.nextEntry() {
            var sha1: String?
            if entry.kind == .file {
                var hasher = Insecure.SHA1()
                while true {
                    let count = try reader.readData(into: buffer)
                    if count == 0 { break }
                    hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
                }
                sha1 = hasher.finalize().hexString
            }
            seen.append(Seen(path: entry.path.string, kind: entry.kind, mode: entry.mode, link: entry.linkTarget, sha1: sha1))
        }
        return seen
    }

    static func native(_ path: String) throws -> XarReader {
        guard case .reader(let reader) = try XarReader.open(path: path, limits: PackageLimits()) else {
            throw ReadError.unreadable(path: path, "pkgtool's own xar reader does not read it")
        }
        return reader
    }

    static func check(_ path: String, depth: PackageScanner.Depth = .full) throws -> [String] {
        try PackageCheck.run(path, context: RuleContext(purpose: .validate), depth: depth)
            .diagnostics.map { "\($0.code.rawValue) \($0.path ?? "-")" }
    }

    @Test func agreesWithLibarchiveOnCraftedPackages() throws {
        let dir = try Scratch()
        let big = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 7) }
        let path = try XarCrafter([
            XarCrafter.contentInfo(),
            .file("Contents/a.txt", "hello"),
            F(path: "Contents/stored.bin", data: big, encoding: .stored),
            F(path: "Contents/zipped.bin", data: big),
            F(path: "Contents/empty.txt"),
            F(path: "Contents/x.sh", data: Array("#!/bin/sh\n".utf8), mode: "0755"),
            .symlink("Contents/link", "a.txt"),
            F(path: "Contents/sub/é名.txt", data: Array("unicode".utf8), nameBase64: true),
        ]).write(to: dir.path("p.pkg"))
        let mine = try Self.read(Self.native(path))
        let theirs = try Self.read(LibArchiveReader(path: path))
        #expect(mine == theirs)
        #expect(mine.count == 10)
        #expect(mine.contains { $0.path == "Contents/sub/é名.txt" })
    }

    @Test func agreesWithLibarchiveOnBsdtarPackages() throws {
        let dir = try Scratch()
        try dir.write("root/ContentInfo.plist", XarCrafter.plist())
        try dir.write("root/Contents/text.txt", String(repeating: "some text ", count: 5000))
        try dir.write("root/Contents/deep/er/file.bin", (0..<70_000).map { UInt8(truncatingIfNeeded: $0 * 7) })
        try dir.write("root/Contents/empty", [])
        symlink("../text.txt", dir.path("root/Contents/deep/link"))
        for options in ["xar:checksum=sha1", "xar:checksum=md5", "xar:compression=none", "xar:checksum=md5,xar:compression=none"] {
            let out = dir.path("p-\(options.count).pkg")
            #expect(try bsdtar(["--format", "xar", "--options", options, "-cf", out, "-C", dir.path("root"), "ContentInfo.plist", "Contents"]) == 0)
            // libarchive hands entries out in heap order, pkgtool in TOC order: compare by path.
            let mine = try Self.read(Self.native(out)).sorted { $0.path < $1.path }
            let theirs = try Self.read(LibArchiveReader(path: out)).sorted { $0.path < $1.path }
            #expect(mine == theirs, "\(options): \(mine.filter { !theirs.contains($0) }) vs \(theirs.filter { !mine.contains($0) })")
            #expect(try Self.check(out) == [], "\(options)")
        }
    }

    /// A content package whose one file bsdtar compressed with bzip2, which pkgtool's own reader
    /// leaves to libarchive; its path in `dir`.
    static func bzip2Package(in dir: Scratch) throws -> String {
        try dir.write("root/ContentInfo.plist", XarCrafter.plist())
        try dir.write("root/Contents/text.txt", String(repeating: "bzip2 text ", count: 2000))
        let out = dir.path("bzip2.pkg")
        #expect(try bsdtar(["--format", "xar", "--options", "xar:compression=bzip2", "-cf", out, "-C", dir.path("root"), "ContentInfo.plist", "Contents"]) == 0)
        return out
    }

    @Test func packagesItDoesNotReadGoToLibarchive() throws {
        let dir = try Scratch()
        let out = try Self.bzip2Package(in: dir)
        guard case .needsArchiveSupport = try XarReader.open(path: out, limits: PackageLimits()) else {
            Issue.record("pkgtool's own reader claims a bzip2 package")
            return
        }
        #expect(try Self.check(out) == [])
        let facts = try PackageCheck.run(out, context: RuleContext(purpose: .validate)).facts
        let text = try #require(facts.entries.first { $0.path.string == "Contents/text.txt" })
        #expect(text.sha1 == Insecure.SHA1.hash(data: Data(String(repeating: "bzip2 text ", count: 2000).utf8)).hexString)
    }

    @Test func damagedDataIsACheckumMismatchNamingTheFile() throws {
        let dir = try Scratch()
        for (name, file) in [
            ("zlib, extracted", F(path: "Contents/a.txt", data: Make.text("hello"), corruptChecksum: true)),
            ("zlib, archived", F(path: "Contents/a.txt", data: Make.text("hello"), corruptArchivedChecksum: true)),
            ("stored, extracted", F(path: "Contents/a.txt", data: Make.text("hello"), encoding: .stored, corruptChecksum: true)),
            ("stored, both", F(path: "Contents/a.txt", data: Make.text("hello"), encoding: .stored, corruptChecksum: true, corruptArchivedChecksum: true)),
        ] {
            let path = try XarCrafter([Make.plist, file, .file("Contents/b.txt", "after")]).write(to: dir.path("p.pkg"))
            _ = try Self.native(path)
            #expect(try Self.check(path) == ["checksum-mismatch Contents/a.txt"], "\(name)")
            // The first look of extract reads no file data, so it cannot see this.
            #expect(try Self.check(path, depth: .headers) == [], "\(name)")
        }
    }

    @Test func aDamagedTableOfContentsIsRefusedBeforeAnyEntry() throws {
        let dir = try Scratch()
        var bytes = XarCrafter(Make.valid()).build()
        let tocLength = bytes[8..<16].reduce(0) { $0 << 8 | Int($1) }
        bytes[28 + tocLength] ^= 0xFF   // the first byte of the stored TOC sha1
        let path = dir.path("p.pkg")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let reader = try Self.native(path)
        #expect(throws: ReadError.self) { try reader.nextEntry() }
        #expect(try Self.check(path) == ["checksum-mismatch -"])
    }

    @Test func aHeaderClaimingTheLargestTableOfContentsIsUnreadableNotATrap() throws {
        let dir = try Scratch()
        var bytes = XarCrafter(Make.valid()).build()
        let claimed = UInt64(Int64.max - 28)
        for index in 0..<8 { bytes[8 + index] = UInt8(truncatingIfNeeded: claimed >> (56 - 8 * index)) }
        let path = dir.path("p.pkg")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        #expect(try Self.check(path) == ["unreadable-archive -"])
    }

    @Test func liesAboutSizesAndCutOffFilesAreUnreadable() throws {
        let dir = try Scratch()
        let short = try XarCrafter([Make.plist, F(path: "Contents/a.txt", data: Make.text("hello"), declaredSize: 9)]).write(to: dir.path("short.pkg"))
        #expect(try Self.check(short) == ["unreadable-archive Contents/a.txt"])
        let long = try XarCrafter([Make.plist, F(path: "Contents/a.txt", data: Make.text("hello world"), encoding: .stored, declaredSize: 4)]).write(to: dir.path("long.pkg"))
        #expect(try Self.check(long) == ["unreadable-archive Contents/a.txt"])
        let whole = XarCrafter([Make.plist, F(path: "Contents/a.bin", data: Array(repeating: 7, count: 10_000), encoding: .stored)])
        let cut = try whole.write(to: dir.path("cut.pkg"), truncatedTo: whole.build().count - 100)
        // Said as what it is, the package cut short, as every command says it (issue 21, item 10).
        #expect(try Self.check(cut).contains("unreadable-archive -"))
    }

    @Test func overlongPathsFromDeepNestingAreRefused() throws {
        let dir = try Scratch()
        let deep = (0..<40).map { _ in String(repeating: "d", count: 120) }.joined(separator: "/")
        let path = try XarCrafter([Make.plist, .file("Contents/" + deep + "/f.txt", "deep")]).write(to: dir.path("p.pkg"))
        let diagnostics = try Self.check(path)
        #expect(diagnostics.contains("unreadable-archive -"))
    }

    @Test func digestsComeFromTheVerifiedTableOfContents() throws {
        let dir = try Scratch()
        let data = Array(repeating: UInt8(ascii: "z"), count: 100_000)
        let path = try XarCrafter([Make.plist, F(path: "Contents/z.txt", data: data), F(path: "Contents/s.bin", data: data, encoding: .stored)])
            .write(to: dir.path("p.pkg"))
        let facts = try PackageCheck.run(path, context: RuleContext(purpose: .validate), digests: true).facts
        let expected = Insecure.SHA1.hash(data: Data(data)).hexString
        #expect(facts.entries.filter { $0.kind == .file && $0.path.isInsideContents }.map(\.sha1) == [expected, expected])
    }

    /// A TOC many times the inflater's ring: every entry comes out with its name, place and
    /// digests, the same as libarchive reads them.
    @Test func aLargeTableOfContentsReadsWhole() throws {
        let dir = try Scratch()
        var files: [F] = [Make.plist]
        for index in 0..<4_000 { files.append(.file("Contents/d\(index % 40)/f\(index).txt", "file number \(index)")) }
        let path = try XarCrafter(files).write(to: dir.path("p.pkg"))
        let toc = try XarTableOfContents.read(path)
        #expect(toc.entries.count == 1 + 1 + 40 + 4_000)
        for index in [0, 1, 1_999, 3_999] {
            let entry = try #require(toc.entry("Contents/d\(index % 40)/f\(index).txt"))
            #expect(entry.extractedChecksum == Insecure.SHA1.hash(data: Data("file number \(index)".utf8)).hexString)
            #expect(toc.entries[entry.parent].path == "Contents/d\(index % 40)")
        }
        // libarchive hands entries out in heap order, pkgtool in TOC order: compare by path.
        let mine = try Self.read(Self.native(path)).sorted { $0.path < $1.path }
        let theirs = try Self.read(LibArchiveReader(path: path)).sorted { $0.path < $1.path }
        #expect(mine.count == toc.entries.count)
        #expect(mine == theirs)
        #expect(try Self.check(path) == [])
    }

    /// Digests are read in either case; one that is not hex (or odd-length) matches no data.
    @Test func digestsInEitherCaseAndBrokenOnes() throws {
        let sha1 = Array("0123456789abcdefABCDEF0123456789aBcDeF01".utf8)
        func table(_ archived: String) -> XarEntryTable {
            var entry = XarTableOfContents.Entry()
            entry.name = Array("f".utf8)
            entry.type = "file"
            entry.archivedStyle = "sha1"
            entry.archivedChecksum = archived
            entry.extractedStyle = "SHA1"
            entry.extractedChecksum = String(decoding: sha1, as: UTF8.self)
            var table = XarEntryTable()
            table.add(entry)
            table.finish()
            return table
        }
        let good = table(String(decoding: sha1, as: UTF8.self))
        let expected: [UInt8] = [0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF, 0xAB, 0xCD, 0xEF, 0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF, 0x01]
        #expect(Array(good.archivedDigest(good.records[0])) == expected)
        #expect(Array(good.extractedDigest(good.records[0])) == expected)
        #expect(good.needsLibArchive == nil)
        for broken in ["0123456789abcdefABCDEF0123456789aBcDeF0g", "0123456789abcdefABCDEF0123456789aBcDeF0", "0123456789abcdef:BCDEF0123456789aBcDeF01", "é0123456789abcdefABCDEF0123456789aBcDeF"] {
            let bad = table(broken)
            #expect(Array(bad.archivedDigest(bad.records[0])) == [0], "\(broken)")
            #expect(Array(bad.extractedDigest(bad.records[0])) == expected, "\(broken)")
        }
    }

    /// An install's second pass takes the table of contents its first look parsed, but only while
    /// the file still holds that TOC: a package replaced or damaged between the passes is read
    /// afresh, and a TOC that no longer matches its checksum is refused.
    @Test func aTableKeptBetweenPassesIsUsedOnlyForTheSameTableOfContents() throws {
        let dir = try Scratch()
        let path = dir.path("p.pkg")
        let first = XarCrafter(Make.valid([.file("Contents/a.txt", "first")])).build()
        let second = XarCrafter(Make.valid([.file("Contents/b.txt", "second"), .file("Contents/c.txt", "more")])).build()
        try Data(first).write(to: URL(fileURLWithPath: path))
        let expected = try Self.read(Self.native(path))

        func open(_ memo: XarTableMemo) throws -> XarReader {
            guard case .reader(let reader) = try XarReader.open(path: path, limits: PackageLimits(), memo: memo) else {
                throw ReadError.unreadable(path: path, "pkgtool's own xar reader does not read it")
            }
            return reader
        }

        // Unchanged: the second pass takes the kept table, and keeps it for a third (a delta sync
        // parses the TOC to plan, then installs with two passes).
        var memo = XarTableMemo()
        _ = try open(memo)
        #expect(try Self.read(open(memo)) == expected)
        #expect(memo.timesTaken == 1)
        #expect(try Self.read(open(memo)) == expected)
        #expect(memo.timesTaken == 2)

        // Replaced between the passes: the new package's entries, from a fresh parse.
        memo = XarTableMemo()
        _ = try open(memo)
        try Data(second).write(to: URL(fileURLWithPath: path))
        let replaced = try Self.read(open(memo))
        #expect(replaced == (try Self.read(Self.native(path))))
        #expect(replaced.map(\.path).contains("Contents/c.txt"))
        #expect(memo.take() != nil)

        // The same TOC, but its checksum in the heap damaged: refused.
        try Data(first).write(to: URL(fileURLWithPath: path))
        memo = XarTableMemo()
        _ = try open(memo)
        var damaged = first
        let heapStart = Int(try #require(XarHeader(Array(first.prefix(XarHeader.size)))).heapStart)
        damaged[heapStart] ^= 0xFF
        try Data(damaged).write(to: URL(fileURLWithPath: path))
        #expect(throws: ReadError.self) { try Self.read(open(memo)) }
    }

    /// Only small tables are kept: a large package's is parsed again rather than held in memory
    /// through the first look's rules.
    @Test func largeTablesAreNotKept() throws {
        let dir = try Scratch()
        let path = try XarCrafter(Make.valid((0..<500).map { .file("Contents/f\($0).txt", "x") })).write(to: dir.path("p.pkg"))
        let memo = XarTableMemo()
        guard case .reader = try XarReader.open(path: path, limits: PackageLimits(), memo: memo) else {
            Issue.record("pkgtool's own xar reader does not read it")
            return
        }
        let small = try #require(memo.take())
        var large = small
        let entries = try XarTableOfContents.read(path).entries
        while large.table.byteCount <= XarTableMemo.maxKeptBytes {
            for entry in entries { large.table.add(entry) }
        }
        memo.keep(large)
        #expect(memo.take() == nil)
        memo.keep(small)
        #expect(memo.take() != nil)
    }
}
