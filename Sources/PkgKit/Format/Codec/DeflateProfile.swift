
/// Which deflate engine, at which of its own levels, compresses a file for one `create` level
/// (1–9): the one place that decides it. Every choice is a plain zlib stream that bsdtar and
/// Apple's xar read; for a given level and file the bytes are always the same.
///
/// Chosen by measuring every engine and level on a real-data corpus (bench/RESULTS.md):
/// - files up to `wholeLimit` go to libdeflate in one call, where it is linked, at the same
///   level up to 6: its level 5, the default, makes such files smaller than zlib's level 6
///   (bsdtar's) in under half of zlib's time. Its level 4 is faster still, but matches greedily:
///   on text in records (CSV, tables) it is 15 % larger. 7–9 map to libdeflate's slower, smaller
///   levels 8, 10 and 12;
/// - levels 1–3 stream every file of 64 KiB or more through ISA-L, where it is linked: several
///   times faster, about 5 % larger;
/// - larger files stream through `streaming`, which chunked compression asks for as well: from
///   level 4 on never below zlib's level 6, since zlib's lower levels make large files up to 4 %
///   larger than bsdtar's, and large files are most of a package's bytes.
///
/// Where libdeflate and ISA-L are missing (Apple's platforms), zlib does it all at the level
/// given, or at 6 from level 4 to 6.
public struct DeflateProfile: Sendable, Equatable {
    /// A compressor and its own level.
    public enum Engine: Sendable, Equatable {
        /// libdeflate, whole buffers only (1–12).
        case libdeflate(Int32)
        /// ISA-L's streaming deflate (1–3).
        case isal(Int32)
        /// zlib's streaming deflate (1–9).
        case zlib(Int32)
    }

    /// The `create` level, 1–9.
    public let level: Int32
    /// The engine for files of at most `wholeLimit` bytes, compressed in one call; nil where
    /// libdeflate is not linked (every file streams).
    public let whole: Engine?
    /// The largest file `whole` compresses; larger ones stream.
    public let wholeLimit: Int64
    /// The engine for files too large to hold in memory: a streaming one.
    public let streaming: Engine

    /// The level `create` uses unless told otherwise.
    public static let defaultLevel: Int32 = 5

    /// The lowest zlib level a file streams at from `create` level 4 on.
    static let streamingFloor: Int32 = 6

    /// The largest file any level compresses in one call: each encoding thread holds a buffer
    /// this size and one for its compressed form. The one size that decides what is held in
    /// memory whole: a writer keeps compressed output up to it before spilling to a scratch file
    /// (`FileEncoder.memoryLimit`), a reader inflates an entry up to it in one call
    /// (`XarEntryDecoder.wholeLimit`: whatever a writer compressed whole), and no chunk of a
    /// chunked file is longer (`ChunkParameters.largestChunk`: a client holds one at a time).
    public static let wholeBufferLimit: Int64 = 4 << 20

    /// Below this size a file goes to libdeflate's one call even at the ISA-L levels: setting up
    /// an ISA-L stream (its Huffman tables) costs more than compressing a small file, and
    /// libdeflate's level 1 does it in about two thirds of its level 2's time for a fraction of a
    /// percent more bytes. ISA-L's own one-call deflate is not used: its bytes for one input
    /// varied from run to run.
    static let smallFile: Int64 = 64 * 1024

    /// The profile of `level` (clamped to 1–9) with the engines linked here.
    public init(level: Int32) {
        self.init(level: level, libdeflate: WholeBufferDeflater.isAvailable, isal: FastDeflater.isAvailable)
    }

    /// The profile of `level` given which optional engines are linked (tests ask for each case).
    package init(level: Int32, libdeflate: Bool, isal: Bool) {
        let level = min(max(level, 1), 9)
        self.level = level
        if level <= 3 && isal {
            whole = libdeflate ? .libdeflate(1) : nil
            wholeLimit = libdeflate ? Self.smallFile - 1 : 0
            streaming = .isal(level)
        } else {
            whole = libdeflate ? .libdeflate(Self.libdeflateLevel(level)) : nil
            wholeLimit = libdeflate ? Self.wholeBufferLimit : 0
            streaming = .zlib(level >= 4 ? max(level, Self.streamingFloor) : level)
        }
    }

    /// libdeflate's level for a `create` level: the same number up to 6, then its slower and
    /// smaller ones (its 9 is hardly smaller than its 8, its 10–12 search much harder).
    static func libdeflateLevel(_ level: Int32) -> Int32 {
        switch level {
        case ...6: return level
        case 7: return 8
        case 8: return 10
        default: return 12
        }
    }

    /// The engine for a file of `size` bytes.
    public func engine(forSize size: Int64) -> Engine {
        if let whole, size <= wholeLimit { return whole }
        return streaming
    }

    /// A new compressor of the `streaming` engine.
    package func makeStreamDeflater() -> StreamDeflater {
        switch streaming {
        case .isal(let level): return FastDeflater(level: level) ?? Deflater(level: level)
        case .zlib(let level), .libdeflate(let level): return Deflater(level: min(level, 9))
        }
    }

    /// A new one-call compressor of the `whole` engine; nil when there is none.
    package func makeWholeDeflater() -> WholeBufferDeflater? {
        guard case .libdeflate(let level)? = whole else { return nil }
        return WholeBufferDeflater(level: level)
    }
}
