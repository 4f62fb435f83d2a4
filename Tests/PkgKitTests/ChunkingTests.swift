import Foundation
import Testing
import TestSupport
@testable import PkgKit

/// Content-defined chunks: the cutting rule, the table a TOC carries, and chunked packages as
/// `create` writes them.
@Suite struct ChunkingTests {
    let parameters = ChunkParameters.standard

    /// The chunk sizes of `data` fed in pieces of `piece` bytes.
    func cut(_ data: Data, piece: Int) -> [Int] {
        var chunker = ContentDefinedChunker(parameters)
        var sizes: [Int] = [], current = 0
        data.withUnsafeBytes { raw in
            var position = 0
            while position < raw.count {
                let end = min(raw.count, position + piece)
                var taken = position
                while taken < end {
                    let (count, ends) = chunker.scan(UnsafeRawBufferPointer(rebasing: raw[taken..<end]))
                    current += count
                    taken += count
                    if ends { sizes.append(current); current = 0 }
                }
                position = end
            }
        }
        if current > 0 { sizes.append(current) }
        return sizes
    }

    @Test func cutsTheSamePlacesWhateverThePiecesAndWithinTheSizes() {
        let data = compressibleText(3 << 20, seed: 1)
        let whole = cut(data, piece: data.count)
        #expect(cut(data, piece: 1000) == whole)
        #expect(cut(data, piece: 65_537) == whole)
        #expect(whole.reduce(0, +) == data.count)
        #expect(whole.dropLast().allSatisfy { $0 >= parameters.minimumSize && $0 <= parameters.maximumSize })
        // About the average: 3 MiB in 256 KiB chunks.
        #expect((6...24).contains(whole.count), "\(whole.count) chunks")
    }

    @Test func anInsertionMovesOnlyTheBoundariesNearIt() {
        let data = compressibleText(4 << 20, seed: 2)
        var inserted = data.prefix(100_000)
        inserted.append(compressibleText(300_000, seed: 3))
        inserted.append(data.dropFirst(100_000))
        func boundaries(_ data: Data) -> Set<Int> {
            var at = 0
            return Set(cut(data, piece: 1 << 20).map { at += $0; return at })
        }
        let before = boundaries(data), after = Set(boundaries(inserted).map { $0 - 300_000 })
        // Past the change, the boundaries are the same ones, shifted.
        let late = before.filter { $0 > 700_000 }
        #expect(late.subtracting(after).count <= 1, "\(late.subtracting(after).count) of \(late.count) boundaries moved")
    }

    func table(_ sizes: [(Int, Int)], start: Int64 = 2) -> ChunkTable {
        var table = ChunkTable(parameters: parameters, dataStart: start)
        for (index, (size, stored)) in sizes.enumerated() {
            table.append(ChunkTable.Chunk(digest: ChunkDigest(high: UInt64(index), low: 7), size: size, storedLength: stored))
        }
        return table
    }

    func declared(_ table: ChunkTable, _ change: (inout ChunkTable.Declared) -> Void = { _ in }) -> ChunkTable.Declared {
        var declared = ChunkTable.Declared()
        let attributes = Dictionary(uniqueKeysWithValues: table.attributes)
        declared.style = attributes["style"]
        (declared.minimumSize, declared.averageSize, declared.maximumSize) = (Int64(attributes["min"]!), Int64(attributes["avg"]!), Int64(attributes["max"]!))
        (declared.dataStart, declared.count) = (Int64(attributes["start"]!), Int64(attributes["count"]!))
        change(&declared)
        return declared
    }

    @Test func aTableReadsBackOnlyWhenItFitsItsFileExactly() {
        let written = table([(70_000, 30_000), (80_000, 9_000), (5, 10)])
        let text = Array(written.base64.utf8)
        let size: Int64 = 150_005, length: Int64 = 2 + 39_010 + 6
        #expect(ChunkTable(declared: declared(written), text: text, size: size, length: length, gzip: true) == written)
        // Sizes that do not add up to the file, stored bytes past its data, a count that is not
        // the records', another style, a start that is not after the zlib header: all ignored.
        #expect(ChunkTable(declared: declared(written), text: text, size: size + 1, length: length, gzip: true) == nil)
        #expect(ChunkTable(declared: declared(written), text: text, size: size, length: length - 7, gzip: true) == nil)
        #expect(ChunkTable(declared: declared(written) { $0.count = 2 }, text: text, size: size, length: length, gzip: true) == nil)
        #expect(ChunkTable(declared: declared(written) { $0.style = "other" }, text: text, size: size, length: length, gzip: true) == nil)
        #expect(ChunkTable(declared: declared(written) { $0.dataStart = 0 }, text: text, size: size, length: length, gzip: true) == nil)
        #expect(ChunkTable(declared: declared(written) { $0.maximumSize = 1 << 30 }, text: text, size: size, length: length, gzip: true) == nil)
        #expect(ChunkTable(declared: declared(written) { $0.count = Int64(ChunkTable.maxChunks) + 1 }, text: text, size: size, length: length, gzip: true) == nil)
        // A chunk under the minimum that is not the last, or over the maximum, is no cut of ours.
        let short = table([(1_000, 900), (80_000, 9_000)])
        #expect(ChunkTable(declared: declared(short), text: Array(short.base64.utf8), size: 81_000, length: 10_000, gzip: true) == nil)
        let long = table([(parameters.maximumSize + 1, 900)])
        #expect(ChunkTable(declared: declared(long), text: Array(long.base64.utf8), size: Int64(parameters.maximumSize + 1), length: 10_000, gzip: true) == nil)
        // Stored data: each chunk's stored length is its size.
        let stored = table([(70_000, 70_000)], start: 0)
        #expect(ChunkTable(declared: declared(stored), text: Array(stored.base64.utf8), size: 70_000, length: 70_000, gzip: false) == stored)
        #expect(ChunkTable(declared: declared(written), text: text, size: size, length: length, gzip: false) == nil)
    }
}
