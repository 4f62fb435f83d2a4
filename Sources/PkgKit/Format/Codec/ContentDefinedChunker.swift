
/// The sizes a `ContentDefinedChunker` cuts to. They travel with every chunk table, so that a
/// client cuts its earlier copy of a file exactly as the package's writer cut the new one.
public struct ChunkParameters: Sendable, Equatable {
    /// No chunk is shorter (except a file's last).
    public var minimumSize: Int
    /// The size chunks tend to: a power of two.
    public var averageSize: Int
    /// No chunk is longer.
    public var maximumSize: Int

    /// What `create` uses: a 1 MiB change then costs about 1 MiB plus a chunk either side, while
    /// a full flush every 256 KiB on average costs compressed data about half a percent (128 KiB
    /// cost twice that).
    public static let standard = ChunkParameters(minimumSize: 64 << 10, averageSize: 256 << 10, maximumSize: 1 << 20)
    /// Files smaller than this are never chunked: a changed one is fetched whole, as cheaply
    /// (larger ones that a level compresses in one call are not either; see `ChunkedFileEncoder`).
    public static let smallestChunkedFile: Int64 = 1 << 20
    /// The largest chunk any table may declare: a client holds one chunk in memory at a time.
    package static let largestChunk = Int(DeflateProfile.wholeBufferLimit)

    public init(minimumSize: Int, averageSize: Int, maximumSize: Int) {
        self.minimumSize = minimumSize
        self.averageSize = averageSize
        self.maximumSize = maximumSize
    }

    /// Whether a chunker can cut with these sizes (a table from elsewhere may declare anything).
    var isUsable: Bool {
        minimumSize >= 64 && averageSize.nonzeroBitCount == 1 && averageSize >= 256 && minimumSize <= averageSize
            && averageSize <= maximumSize && maximumSize <= Self.largestChunk
    }
}

/// Cuts a byte stream into content-defined chunks: FastCDC's gear hash with normalized chunking.
/// A boundary depends only on the bytes just before it, so an insertion or a change moves the
/// boundaries near it and no others: two versions of a file share every chunk away from their
/// differences, whatever shifted in between. Fed in pieces of any size, it cuts the same places.
package struct ContentDefinedChunker {
    package let parameters: ChunkParameters
    /// Tested before the average size (more bits: cuts are rarer) and after it (fewer bits),
    /// which narrows the spread of chunk sizes around the average. High bits: in a gear hash
    /// they depend on the most bytes.
    private let strictMask: UInt64
    private let looseMask: UInt64
    private var hash: UInt64 = 0
    /// Bytes of the current chunk so far.
    package private(set) var length = 0

    package init(_ parameters: ChunkParameters) {
        self.parameters = parameters
        let bits = parameters.averageSize.trailingZeroBitCount
        strictMask = UInt64.max << UInt64(64 - min(bits + 2, 63))
        looseMask = UInt64.max << UInt64(64 - max(bits - 2, 1))
    }

    /// Takes bytes of the stream: returns how many of them belong to the current chunk, and
    /// whether it ends after them (the next call then starts a new chunk).
    package mutating func scan(_ bytes: UnsafeRawBufferPointer) -> (count: Int, ends: Bool) {
        let count = bytes.count
        var index = 0
        // No cut before the minimum size: those bytes are not even hashed.
        if length < parameters.minimumSize {
            index = min(parameters.minimumSize - length, count)
            length += index
            if length < parameters.minimumSize { return (count, false) }
        }
        // The chunk's length before `bytes`: after taking `bytes[index - 1]` it is `before + index`.
        let before = length - index
        let strictEnd = min(count, parameters.averageSize - before)
        let looseEnd = min(count, parameters.maximumSize - before)
        var hash = self.hash
        let (strict, loose, maximum) = (strictMask, looseMask, parameters.maximumSize)
        let cut = Self.gear.withUnsafeBufferPointer { gear -> Bool in
            while index < strictEnd {
                hash = hash << 1 &+ gear[Int(bytes[index])]
                index += 1
                if hash & strict == 0 { return true }
            }
            while index < looseEnd {
                hash = hash << 1 &+ gear[Int(bytes[index])]
                index += 1
                if hash & loose == 0 { return true }
            }
            return before + index >= maximum
        }
        if cut {
            self.hash = 0
            length = 0
            return (index, true)
        }
        self.hash = hash
        length = before + count
        return (count, false)
    }

    /// 256 fixed pseudo-random words (splitmix64 from a fixed seed): part of the chunk table's
    /// style, so they never change.
    static let gear: [UInt64] = {
        var state: UInt64 = 0x7067_6b74_6f6f_6c31
        return (0..<256).map { _ in
            state &+= 0x9E37_79B9_7F4A_7C15
            var value = state
            value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
            value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
            return value ^ (value >> 31)
        }
    }()
}
