import Crypto
import Foundation
import Testing
import TestSupport
@testable import PkgKit

/// A xar some of whose files' data the caller has already (a delta's sparse copy): the reader
/// withholds those files' data, their stored bytes never read (here they are zeros, which read
/// would be damage), and the scanner describes them from what the caller supplies; every other
/// file reads and checks as usual.
@Suite struct WithheldDataTests {
    static let heldPaths: Set<String> = ["Contents/text.txt", "Contents/big.bin", "Contents/small/7.txt"]

    /// A package file that remembers every range read from it.
    final class RecordingBytes: PackageBytes, @unchecked Sendable {
        let file: PackageFile
        private let lock = NSLock()
        private var read: [Range<Int64>] = []
        init(_ path: String) throws { file = try PackageFile(path: path) }
        var size: Int64 { file.size }
        var ranges: [Range<Int64>] { lock.withLock { read } }
        func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
            let count = try file.read(into: buffer, at: offset)
            lock.withLock { read.append(offset ..< offset + Int64(count)) }
            return count
        }
    }

    /// A package of every shape the reader handles, with the heap ranges of `heldPaths` zeroed (as
    /// a copy that holds only the other files' data has them), and what is on hand for them.
    static func zeroedPackage(in dir: Scratch) throws -> (whole: String, zeroed: String, entries: Set<Int>,
                                                          supplied: [ArchivePath: SuppliedFile], heldRanges: [Range<Int64>]) {
        let files = XarReadAheadTests.mixed()
        let whole = try XarCrafter(files).write(to: dir.path("p.pkg"))
        let names = try XarReadAheadTests.read(whole, plan: nil).map(\.path)
        var bytes = try Array(Data(contentsOf: URL(fileURLWithPath: whole)))
        let toc = try XarTableOfContents.read(whole)
        var heldRanges: [Range<Int64>] = []
        for entry in toc.entries where heldPaths.contains(entry.path) {
            let start = Int(toc.heapStart) + Int(try #require(entry.offset))
            heldRanges.append(Int64(start) ..< Int64(start) + (try #require(entry.length)))
            for position in start..<start + Int(try #require(entry.length)) { bytes[position] = 0 }
        }
        let zeroed = dir.path("zeroed.pkg")
        try Data(bytes).write(to: URL(fileURLWithPath: zeroed))
        var supplied: [ArchivePath: SuppliedFile] = [:]
        for file in files where heldPaths.contains(file.path) {
            supplied[ArchivePath(file.path)] = SuppliedFile(size: Int64(file.data.count), sha1: SHA1Value(Insecure.SHA1.hash(data: file.data)),
                                                            executable: nil)
        }
        return (whole, zeroed, Set(names.indices.filter { heldPaths.contains(names[$0]) }), supplied, heldRanges)
    }

    /// Opens `bytes` with the data of `entries` withheld.
    static func reader(_ bytes: PackageBytes, path: String, withholding entries: Set<Int>) throws -> XarReader {
        guard case .reader(let reader) = try XarReader.open(bytes, path: path, limits: PackageLimits(),
                                                            dataWanted: { !entries.contains($0) }) else {
            throw ReadError.unreadable(path: path, "not read by pkgtool's own reader")
        }
        return reader
    }

    @Test func withheldFilesAreHandedOnAndNeverRead() throws {
        let dir = try Scratch()
        let (whole, zeroed, entries, _, heldRanges) = try Self.zeroedPackage(in: dir)
        #expect(entries.count == Self.heldPaths.count)
        let bytes = try RecordingBytes(zeroed)
        let reader = try Self.reader(bytes, path: zeroed, withholding: entries)
        var onHand: [String] = []
        var seen: [XarReaderTests.Seen] = []
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 16)
        defer { buffer.deallocate() }
        while let entry = try reader.nextEntry() {
            if entry.dataWithheld {
                onHand.append(entry.path.string)
                #expect(reader.declaredSHA1 == nil, "nothing of \(entry.path) was checked")
                #expect(try reader.readData(into: buffer) == 0, "\(entry.path) delivers no data")
                continue
            }
            var hasher = Insecure.SHA1()
            while case let count = try reader.readData(into: buffer), count > 0 {
                hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            }
            seen.append(XarReaderTests.Seen(path: entry.path.string, kind: entry.kind, mode: entry.mode, link: entry.linkTarget,
                                            sha1: entry.kind == .file ? hasher.finalize().hexString : nil))
        }
        #expect(Set(onHand) == Self.heldPaths)
        let expected = try XarReadAheadTests.read(whole, plan: nil).filter { !Self.heldPaths.contains($0.path) }
        #expect(seen == expected)
        // Reading the TOC reads on past its end in blocks; data is read only from the heap on.
        let heapStart = try XarTableOfContents.read(zeroed).heapStart
        let touched = bytes.ranges.filter { read in read.lowerBound >= heapStart && heldRanges.contains { $0.overlaps(read) } }
        #expect(touched.isEmpty, "read \(touched) of the files on hand")
        #expect(bytes.ranges.contains { $0.lowerBound >= heapStart + 64 }, "the other files' data was read")
    }

    /// Through the scanner, with every kind of read-ahead, the zeros are never seen: no diagnostic,
    /// and each withheld file is described by what is supplied for it (size, sha1).
    @Test func theScannerDescribesWithheldFilesFromWhatIsSupplied() throws {
        let dir = try Scratch()
        let (whole, zeroed, entries, supplied, _) = try Self.zeroedPackage(in: dir)
        let expected = try PackageCheck.run(whole, context: RuleContext(purpose: .validate)).facts.entries
        let source = PackageSource.delta(zeroed, shownAs: zeroed, name: "p.pkg", reusedEntries: entries)
        for digests in [false, true] {
            let check = try PackageCheck.run(source, context: RuleContext(purpose: .validate), digests: digests, supplied: supplied)
            #expect(check.diagnostics.isEmpty, "\(check.diagnostics)")
            #expect(check.facts.readFailures.isEmpty, "\(check.facts.readFailures)")
            for path in Self.heldPaths {
                let fact = try #require(check.facts.entries.first { $0.path.string == path })
                let original = try #require(expected.first { $0.path.string == path })
                #expect(fact.size == original.size && fact.sha1 == original.sha1, "\(path)")
            }
        }
        // Without them, the same copy is damaged.
        #expect(!(try PackageCheck.run(zeroed, context: RuleContext(purpose: .validate)).diagnostics.isEmpty))
        // And a withheld file that nothing supplies is never described as empty: reading stops there.
        var partly = supplied
        partly[ArchivePath("Contents/big.bin")] = nil
        let missing = try PackageCheck.run(source, context: RuleContext(purpose: .validate), supplied: partly)
        #expect(missing.facts.readFailures.contains { $0.code == .unreadableArchive && $0.path == "Contents/big.bin" },
                "\(missing.facts.readFailures)")
    }

    /// A xar only libarchive reads would be read whole by it, and most of a sparse copy is not
    /// there: opening one as a delta's source says to download it whole.
    @Test func aPackageOnlyLibarchiveReadsIsNoDeltaSource() throws {
        let dir = try Scratch()
        let out = try XarReaderTests.bzip2Package(in: dir)
        #expect {
            _ = try PackageSource.delta(out, shownAs: out, name: "bzip2.pkg", reusedEntries: []).open(PackageLimits())
        } throws: { error in
            guard case ReadError.unreadable(_, let message) = error else { return false }
            return message.contains("download it whole")
        }
    }
}
