import Crypto
import Foundation

/// The first 16 bytes of a chunk's SHA-256: what a chunk table names each chunk by, and what a
/// client checks every chunk against before the file's own sha1.
package struct ChunkDigest: Hashable, Sendable {
    package var high: UInt64
    package var low: UInt64

    package init(_ digest: SHA256.Digest) {
        (high, low) = digest.withUnsafeBytes { ($0.loadUnaligned(as: UInt64.self).bigEndian, $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self).bigEndian) }
    }

    package init(high: UInt64, low: UInt64) {
        (self.high, self.low) = (high, low)
    }
}

/// Hashes one chunk, fed in pieces.
package struct ChunkHasher {
    private var hasher = SHA256()

    package init() {}

    package mutating func update(_ bytes: UnsafeRawBufferPointer) { hasher.update(bufferPointer: bytes) }

    /// The digest of everything fed.
    package var digest: ChunkDigest { ChunkDigest(hasher.finalize()) }
}

/// How one large file of a xar package is cut into content-defined chunks (see
/// `ContentDefinedChunker`), so that a client holding an earlier version of the file can fetch
/// only the chunks it lacks: each chunk's unpacked length and digest, and the length of its
/// stored bytes. A zlib file's stream is fully flushed at every chunk boundary, so each chunk's
/// stored bytes inflate on their own; the stream stays one valid zlib stream that every xar
/// reader decodes as usual.
///
/// It sits in the file's TOC entry as `<chunks style="gear64-sha256" min avg max start count>`
/// holding the base64 of 24 bytes per chunk (digest, unpacked length, stored length, the lengths
/// big-endian), so the catalog's `tocSHA256` anchors it. libarchive and Apple's xar ignore the
/// element.
public struct ChunkTable: Sendable, Equatable {
    /// The one style there is: gear-hash boundaries, SHA-256 digests cut to 16 bytes.
    package static let style = "gear64-sha256"
    static let recordBytes = 24
    /// The most chunks one file's table may declare (8 GiB at the standard minimum size).
    package static let maxChunks = 1 << 17

    /// The most stored bytes a chunk of `size` unpacked bytes may declare: what deflate makes of
    /// data that does not compress (stored blocks, or at worst fixed codes of 9 bits a byte), and
    /// the flush that ends it. A client holds a fetched chunk in memory, so no more is taken.
    package static func maxStoredLength(size: Int) -> Int { size + size / 8 + 64 }

    /// The sizes the file was cut with.
    public var parameters: ChunkParameters
    /// Where the first chunk's stored bytes start in the file's data: 2 after a zlib header, 0
    /// for stored data. Chunks follow one another; a zlib stream's end follows the last.
    public var dataStart: Int64
    /// `recordBytes` per chunk.
    package private(set) var records: [UInt8] = []

    /// One chunk.
    package struct Chunk: Equatable {
        package var digest: ChunkDigest
        package var size: Int
        package var storedLength: Int

        package init(digest: ChunkDigest, size: Int, storedLength: Int) {
            self.digest = digest
            self.size = size
            self.storedLength = storedLength
        }
    }

    package init(parameters: ChunkParameters, dataStart: Int64) {
        self.parameters = parameters
        self.dataStart = dataStart
    }

    /// How many chunks.
    public var count: Int { records.count / Self.recordBytes }

    /// The chunk at `index`.
    package func chunk(_ index: Int) -> Chunk {
        records.withUnsafeBytes { raw in
            let base = index * Self.recordBytes
            let digest = ChunkDigest(high: raw.loadUnaligned(fromByteOffset: base, as: UInt64.self).bigEndian,
                                     low: raw.loadUnaligned(fromByteOffset: base + 8, as: UInt64.self).bigEndian)
            return Chunk(digest: digest, size: Int(raw.loadUnaligned(fromByteOffset: base + 16, as: UInt32.self).bigEndian),
                         storedLength: Int(raw.loadUnaligned(fromByteOffset: base + 20, as: UInt32.self).bigEndian))
        }
    }

    /// Every chunk in order.
    package var chunks: [Chunk] { (0..<count).map(chunk) }

    package mutating func append(_ chunk: Chunk) {
        withUnsafeBytes(of: chunk.digest.high.bigEndian) { records += $0 }
        withUnsafeBytes(of: chunk.digest.low.bigEndian) { records += $0 }
        withUnsafeBytes(of: UInt32(chunk.size).bigEndian) { records += $0 }
        withUnsafeBytes(of: UInt32(chunk.storedLength).bigEndian) { records += $0 }
    }

    /// The same chunks, stored as they are (`create` stores a file whose compression did not pay).
    package func stored() -> ChunkTable {
        var table = ChunkTable(parameters: parameters, dataStart: 0)
        for chunk in chunks { table.append(Chunk(digest: chunk.digest, size: chunk.size, storedLength: chunk.size)) }
        return table
    }

    /// The element's attributes, in the order they are written.
    package var attributes: [(String, String)] {
        [("style", Self.style), ("min", String(parameters.minimumSize)), ("avg", String(parameters.averageSize)),
         ("max", String(parameters.maximumSize)), ("start", String(dataStart)), ("count", String(count))]
    }

    /// The element's text.
    package var base64: String { Data(records).base64EncodedString() }

    /// What a TOC declares for a table, before it is checked against its file.
    package struct Declared: Sendable {
        package var style: String?
        package var minimumSize: Int64?
        package var averageSize: Int64?
        package var maximumSize: Int64?
        package var dataStart: Int64?
        package var count: Int64?

        package init(style: String? = nil, minimumSize: Int64? = nil, averageSize: Int64? = nil, maximumSize: Int64? = nil, dataStart: Int64? = nil, count: Int64? = nil) {
            self.style = style
            self.minimumSize = minimumSize
            self.averageSize = averageSize
            self.maximumSize = maximumSize
            self.dataStart = dataStart
            self.count = count
        }

        /// The most base64 text worth keeping for this declaration (nil: none is).
        package var textLimit: Int? {
            guard style == ChunkTable.style, let count, count > 0, count <= ChunkTable.maxChunks else { return nil }
            return Int(count) * ChunkTable.recordBytes / 3 * 4 + 8
        }
    }

    /// The table a TOC declares for a file of `size` unpacked bytes stored in `length` bytes
    /// (`gzip`: as a zlib stream), or nil when the declaration does not describe exactly such a
    /// file: a hostile table is ignored (the file is then fetched whole), never trusted.
    package init?(declared: Declared, text: [UInt8], size: Int64, length: Int64, gzip: Bool) {
        guard declared.textLimit != nil, let count = declared.count, let start = declared.dataStart,
              let minimum = declared.minimumSize, let average = declared.averageSize, let maximum = declared.maximumSize,
              maximum <= Int64(ChunkParameters.largestChunk), minimum >= 0, average >= 0 else { return nil }
        let parameters = ChunkParameters(minimumSize: Int(minimum), averageSize: Int(average), maximumSize: Int(maximum))
        guard parameters.isUsable, start == (gzip ? 2 : 0), size > 0, length > 0,
              let data = Data(base64Encoded: Data(text)), data.count == Int(count) * Self.recordBytes else { return nil }
        self.init(parameters: parameters, dataStart: start)
        records = Array(data)
        var unpacked: Int64 = 0, stored = start
        for index in 0..<Int(count) {
            let chunk = chunk(index)
            // Every chunk but the last is at least the minimum size, none over the maximum: a
            // client cuts its own copy by the same rule, so no other table can match it.
            guard chunk.size > 0, chunk.size <= parameters.maximumSize, index == Int(count) - 1 || chunk.size >= parameters.minimumSize,
                  chunk.storedLength > 0, chunk.storedLength <= Self.maxStoredLength(size: chunk.size),
                  gzip || chunk.storedLength == chunk.size else { return nil }
            unpacked += Int64(chunk.size)
            stored += Int64(chunk.storedLength)
        }
        guard unpacked == size, stored <= length else { return nil }
    }
}
