import Crypto
import Foundation
import Testing
import TestSupport
@testable import PkgKit
@testable import PkgKitFormat

/// The xar reader's read-ahead (worker threads that inflate and verify ahead of the caller) gives
/// the same entries, bytes and verdicts as reading on one thread; `dataWanted` keeps it away from
/// the heap bytes of entries whose data the caller will never read.
@Suite struct XarReadAheadTests {
    /// Files of every shape the read-ahead handles differently: tiny ones batched together, zlib
    /// ones inflated in one call, one past `XarEntryDecoder.wholeLimit` that is streamed, stored
    /// data spanning several blocks, and an empty file.
    static func mixed() -> [F] {
        let text = Array(String(repeating: "read ahead text, ", count: 20_000).utf8)
        let random = (0..<2_500_000).map { UInt8(truncatingIfNeeded: ($0 &* 2_654_435_761) >> 13) }
        let big = (0..<(Int(XarEntryDecoder.wholeLimit) + 300_000)).map { UInt8(truncatingIfNeeded: $0 % 251 &+ $0 / 4096) }
        var files: [F] = [Make.plist]
        for index in 0..<300 { files.append(.file("Contents/small/\(index).txt", "file \(index) " + String(repeating: "x", count: index))) }
        files += [
            F(path: "Contents/text.txt", data: text),
            F(path: "Contents/random.bin", data: random, encoding: .stored),
            F(path: "Contents/big.bin", data: big),
            F(path: "Contents/empty.txt"),
            .symlink("Contents/link", "text.txt"),
        ]
        return files
    }

    /// Every entry and the sha1 of its bytes, read after `plan` (nil: no read-ahead).
    static func read(_ path: String, plan: ReadAheadPlan?, dataWanted: ((Int) -> Bool)? = nil) throws -> [XarReaderTests.Seen] {
        guard case .reader(let reader) = try XarReader.open(path: path, limits: PackageLimits(), dataWanted: dataWanted) else {
            throw ReadError.unreadable(path: path, "pkgtool's own xar reader does not read it")
        }
        if let plan { #expect(reader.startReadAhead(plan) == (XarReader.readAheadWorkers > 0)) }
        return try XarReaderTests.read(reader)
    }

    @Test func readingAheadGivesTheSameBytes() throws {
        let dir = try Scratch()
        let path = try XarCrafter(Self.mixed()).write(to: dir.path("p.pkg"))
        let plain = try Self.read(path, plan: nil)
        #expect(plain.count > 300)
        #expect(try Self.read(path, plan: .deliver) == plain)
        // Verify-only read-ahead: readData still gives every byte (read on this thread).
        #expect(try Self.read(path, plan: .verify) == plain)
        // validate (verify-only) and diff (every byte) find nothing wrong.
        #expect(try PackageCheck.run(path, context: RuleContext(purpose: .validate), digests: false).diagnostics == [])
        let full = try PackageCheck.run(path, context: RuleContext(purpose: .validate), digests: true)
        #expect(full.diagnostics == [])
        let sizes = Dictionary(uniqueKeysWithValues: Self.mixed().map { ($0.path, $0.data.count) })
        for entry in full.facts.entries where entry.kind == .file {
            #expect(Int(entry.size) == sizes[entry.path.string], "\(entry.path)")
        }
    }

    @Test func readingAheadFindsDamageInEveryShape() throws {
        let dir = try Scratch()
        let big = Array(String(repeating: "big text ", count: 600_000).utf8)
        for (name, file) in [
            ("small zlib", F(path: "Contents/bad.txt", data: Make.text("hello"), corruptChecksum: true)),
            ("small zlib, archived", F(path: "Contents/bad.txt", data: Make.text("hello"), corruptArchivedChecksum: true)),
            ("stored", F(path: "Contents/bad.txt", data: Array(repeating: 3, count: 1_500_000), encoding: .stored, corruptChecksum: true)),
            ("streamed zlib", F(path: "Contents/bad.txt", data: big, corruptChecksum: true)),
        ] {
            var files = Self.mixed()
            files.insert(file, at: 5)
            let path = try XarCrafter(files).write(to: dir.path("p.pkg"))
            for digests in [false, true] {
                let found = try PackageCheck.run(path, context: RuleContext(purpose: .validate), digests: digests).diagnostics
                #expect(found.map { "\($0.code.rawValue) \($0.path ?? "-")" } == ["checksum-mismatch Contents/bad.txt"], "\(name), digests \(digests)")
            }
        }
        // A lying size is unreadable through the read-ahead too.
        var files = Self.mixed()
        files.insert(F(path: "Contents/short.txt", data: Make.text("hello"), declaredSize: 9), at: 7)
        let path = try XarCrafter(files).write(to: dir.path("short.pkg"))
        for digests in [false, true] {
            let found = try PackageCheck.run(path, context: RuleContext(purpose: .validate), digests: digests).diagnostics
            #expect(found.map { "\($0.code.rawValue) \($0.path ?? "-")" } == ["unreadable-archive Contents/short.txt"])
        }
    }

    /// A sparse copy: the heap bytes of some files were never downloaded (zeros). Their entries
    /// still come out, their data reads as empty, and nothing of them is read or checked.
    @Test func dataNotWantedIsNeverRead() throws {
        let dir = try Scratch()
        let path = try XarCrafter(Self.mixed()).write(to: dir.path("p.pkg"))
        let names = try Self.read(path, plan: nil).map(\.path)
        let skipped = Set(["Contents/text.txt", "Contents/big.bin", "Contents/small/7.txt", "Contents/random.bin"])
        let skippedIndices = Set(names.indices.filter { skipped.contains(names[$0]) })
        #expect(skippedIndices.count == skipped.count)

        // Zero the heap ranges of the skipped files, as a sparse download leaves them.
        var bytes = try Array(Data(contentsOf: URL(fileURLWithPath: path)))
        let toc = try XarTableOfContents.read(path)
        for entry in toc.entries where skipped.contains(entry.path) {
            let start = Int(toc.heapStart) + Int(try #require(entry.offset))
            for position in start..<start + Int(try #require(entry.length)) { bytes[position] = 0 }
        }
        let sparse = dir.path("sparse.pkg")
        try Data(bytes).write(to: URL(fileURLWithPath: sparse))
        // Wanted, the zeros are damage.
        #expect(try PackageCheck.run(sparse, context: RuleContext(purpose: .validate), digests: false).diagnostics.count > 0)

        let expected = try Self.read(path, plan: nil).map { seen in
            var seen = seen
            if skipped.contains(seen.path) { seen.sha1 = Insecure.SHA1().finalize().hexString }
            return seen
        }
        var asked: [Int] = []
        let wanted: (Int) -> Bool = { index in
            asked.append(index)
            return !skippedIndices.contains(index)
        }
        for plan in [nil, ReadAheadPlan.deliver, .verify] {
            asked = []
            #expect(try Self.read(sparse, plan: plan, dataWanted: wanted) == expected, "\(String(describing: plan))")
            // Asked once per entry, in TOC document order.
            #expect(asked == Array(0..<asked.count))
        }
        // Through the scanner (verify-only and full), nothing is found wrong, and the skipped files
        // are described by what their caller supplies, never by the zeros nor by the TOC.
        let supplied = SuppliedFile(size: 3, sha1: SHA1Value(Insecure.SHA1.hash(data: Data("abc".utf8))), executable: nil)
        for digests in [false, true] {
            guard case .reader(let reader) = try XarReader.open(path: sparse, limits: PackageLimits(), dataWanted: wanted) else {
                Issue.record("pkgtool's own reader does not read its sparse copy")
                return
            }
            var facts = PackageFacts()
            var scanner = PackageScanner(digests: digests)
            scanner.supplied = Dictionary(uniqueKeysWithValues: skipped.map { (ArchivePath($0), supplied) })
            try scanner.scan(reader, into: &facts)
            #expect(facts.readFailures == [], "digests \(digests)")
            for entry in facts.entries where skipped.contains(entry.path.string) {
                #expect(entry.size == 3)
                #expect(entry.sha1 == supplied.sha1.hexString)
            }
        }
    }

    @Test func bothInflateEnginesAgree() throws {
        let data = Array(String(repeating: "engines agree ", count: 10_000).utf8)
        let stream = XarCrafter.zlib(data)
        #if os(Linux)
        #expect(WholeBufferInflater.Engine.available == [.isal, .libdeflate, .zlib])
        #endif
        for engine in WholeBufferInflater.Engine.available {
            let inflater = WholeBufferInflater(engine: engine)
            var output = [UInt8](repeating: 0, count: data.count)
            let done = stream.withUnsafeBytes { input in output.withUnsafeMutableBytes { inflater.inflate(input, into: $0) } }
            #expect(done && output == data, "\(engine)")
            // One byte short, one byte long, trailing bytes: refused, so that streaming says why.
            var short = [UInt8](repeating: 0, count: data.count - 1)
            #expect(!stream.withUnsafeBytes { input in short.withUnsafeMutableBytes { inflater.inflate(input, into: $0) } })
            var long = [UInt8](repeating: 0, count: data.count + 1)
            #expect(!stream.withUnsafeBytes { input in long.withUnsafeMutableBytes { inflater.inflate(input, into: $0) } })
            let trailing = stream + [0, 1, 2]
            #expect(!trailing.withUnsafeBytes { input in output.withUnsafeMutableBytes { inflater.inflate(input, into: $0) } })
            // Cut short, a damaged block, a damaged Adler-32 trailer: refused.
            for damaged in [Array(stream.dropLast(5)), stream.enumerated().map { $0.offset == 40 ? $0.element ^ 0x10 : $0.element },
                            stream.enumerated().map { $0.offset == stream.count - 1 ? $0.element ^ 0x01 : $0.element }] {
                #expect(!damaged.withUnsafeBytes { input in output.withUnsafeMutableBytes { inflater.inflate(input, into: $0) } }, "\(engine)")
            }
            #expect(inflater.engine == engine)
        }
    }

    /// Thousands of tiny files over several batches, damaged at a batch's first and last entry
    /// and between: a verify-only check (the reader waiting on workers that wake it only every
    /// so many entries) names exactly the damaged files, and a clean copy passes.
    @Test(.timeLimit(.minutes(2)))
    func tinyFilesOverManyBatchesAreEachChecked() throws {
        let dir = try Scratch()
        let damaged: Set<Int> = [0, 1, 63, 64, 700, XarPrefetcher.batchEntries - 1, XarPrefetcher.batchEntries, 2_999]
        func files(damaging: Set<Int>) -> [F] {
            [Make.plist] + (0..<3_000).map { index in
                F(path: "Contents/d\(index / 500)/f\(index).txt", data: Make.text("tiny \(index)"), corruptChecksum: damaging.contains(index))
            }
        }
        let clean = try XarCrafter(files(damaging: [])).write(to: dir.path("clean.pkg"))
        #expect(try PackageCheck.run(clean, context: RuleContext(purpose: .validate), digests: false).diagnostics == [])
        let path = try XarCrafter(files(damaging: damaged)).write(to: dir.path("p.pkg"))
        for digests in [false, true] {
            let found = try PackageCheck.run(path, context: RuleContext(purpose: .validate), digests: digests).diagnostics
            #expect(found.map { "\($0.code.rawValue) \($0.path ?? "-")" }
                    == damaged.sorted().map { "checksum-mismatch Contents/d\($0 / 500)/f\($0).txt" }, "digests \(digests)")
        }
    }

    /// Damaged compressed data, in a file inflated in one call and in one streamed (past
    /// `wholeLimit`), in its blocks or its Adler-32 trailer: the file is unreadable, and the words
    /// are zlib's whichever inflater met the damage first.
    @Test func damagedCompressedDataIsToldInZlibsWords() throws {
        let dir = try Scratch()
        let big = (0..<(Int(XarEntryDecoder.wholeLimit) + 500_000)).map { UInt8(ascii: "a") &+ UInt8(truncatingIfNeeded: ($0 &* 7) % 23 &+ $0 / 50_000 % 3) }
        let small = Array(String(repeating: "small but compressible text ", count: 2_000).utf8)
        let path = try XarCrafter(Make.valid([F(path: "Contents/big.txt", data: big), F(path: "Contents/small.txt", data: small)]))
            .write(to: dir.path("p.pkg"))
        #expect(try PackageCheck.run(path, context: RuleContext(purpose: .validate), digests: false).diagnostics == [])
        let toc = try XarTableOfContents.read(path)
        let original = try Array(Data(contentsOf: URL(fileURLWithPath: path)))
        for name in ["big.txt", "small.txt"] {
            let entry = try #require(toc.entry("Contents/" + name))
            let start = Int(toc.heapStart) + Int(try #require(entry.offset))
            let length = Int(try #require(entry.length))
            // Mid-stream damage in the streamed file (after data has been handed on), a reserved
            // block type at the small file's first block, a wrong trailer in both.
            let blocks = name == "big.txt" ? (start + length / 2, UInt8(0x5A), "the compressed data is corrupt (zlib: ")
                                           : (start + 2, UInt8(0x06), "the compressed data is corrupt (zlib: invalid block type)")
            for (place, at, flip, expected) in [("blocks", blocks.0, blocks.1, blocks.2),
                                                ("trailer", start + length - 1, UInt8(0x01), "the compressed data is corrupt (zlib: incorrect data check)")] {
                var bytes = original
                bytes[at] |= flip
                if bytes[at] == original[at] { bytes[at] ^= flip }
                let damaged = dir.path("\(name)-\(place).pkg")
                try Data(bytes).write(to: URL(fileURLWithPath: damaged))
                for digests in [false, true] {
                    let found = try PackageCheck.run(damaged, context: RuleContext(purpose: .validate), digests: digests).diagnostics
                    #expect(found.map { "\($0.code.rawValue) \($0.path ?? "-")" } == ["unreadable-archive Contents/\(name)"], "\(name) \(place)")
                    #expect(found.first?.message.contains(expected) == true, "\(name) \(place): \(found.map(\.message))")
                }
            }
        }
    }
}
