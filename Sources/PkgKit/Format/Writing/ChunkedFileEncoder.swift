import Crypto
import PkgKitSupport

/// Encodes a large file as `FileEncoder` does, and also cuts it into content-defined chunks
/// (`ContentDefinedChunker`), hashing each: compressed, its zlib stream is fully flushed at every
/// boundary, so each chunk's stored bytes decode on their own (see `ChunkTable`). The chunks'
/// digests and lengths become the file's chunk table, with which a client holding an earlier version of
/// the file fetches only the chunks it lacks.
///
/// A full flush also drops the compressor's history, so zlib writes for each chunk exactly what
/// it writes for that chunk alone: with zlib, the chunks of a file are compressed on the
/// encoder's `jobs` threads at once (`encodeInSegments`), a few megabytes at a time, into the
/// same bytes one stream makes. Otherwise a large text file keeps one thread busy while the
/// other cores, their work done, wait for it. ISA-L's bytes depend on how its input is fed, so its levels stream
/// each file through one compressor (`encodeInOneStream`), as does a file stored as it is.
struct ChunkedFileEncoder {
    package var encoder: FileEncoder
    package var parameters = ChunkParameters.standard

    /// Whether `item` is chunked: a file of at least `smallestChunkedFile` bytes that `profile`
    /// streams anyway. One it compresses in a single libdeflate call (up to 4 MiB at the default
    /// level) stays whole: libdeflate makes it smaller than a flushed zlib stream would, and a
    /// changed one costs at most that much to fetch.
    package static func wants(_ item: SourceItem, profile: DeflateProfile) -> Bool {
        item.size >= ChunkParameters.smallestChunkedFile && item.size > profile.wholeLimit
    }

    /// Encodes `item`, reading it in `scratch`'s buffers. The compressed bytes always go to a
    /// scratch file: these files are a megabyte or more.
    package func encode(_ item: SourceItem, scratch: EncoderScratch) throws -> EncodedFile {
        let reader = FolderReader(items: [item], opener: scratch.opener)
        _ = try reader.nextEntry()
        let step = scratch.buffer.count
        guard case .zlib(let level) = encoder.profile.streaming, let (segment, _) = scratch.wholeBuffers(),
              segment.count > 2 * parameters.maximumSize + step else {
            let head = try encoder.fill(scratch.buffer, from: reader)
            let data = UnsafeRawBufferPointer(rebasing: scratch.buffer[0..<head])
            return try encodeInOneStream(item, reader: reader, head: data, compressed: try encoder.compresses(data, scratch: scratch), scratch: scratch)
        }
        // The first read goes where the segments would: most large files compress.
        let head = try encoder.fill(UnsafeMutableRawBufferPointer(rebasing: segment[0..<step]), from: reader)
        let data = UnsafeRawBufferPointer(rebasing: segment[0..<head])
        guard try encoder.compresses(data, scratch: scratch) else {
            return try encodeInOneStream(item, reader: reader, head: data, compressed: false, scratch: scratch)
        }
        return try encodeInSegments(item, reader: reader, head: head, level: level, segment: segment, scratch: scratch)
    }

    /// Compresses the file a few megabytes at a time, its first `head` bytes already in
    /// `segment`: each read is hashed and cut into chunks as it arrives (while it is in the
    /// processor's cache), then the chunks complete in the segment are hashed and compressed as
    /// zlib at `level` would (see the type's comment), on the encoder's `jobs` threads, and the
    /// chunk still open moves to the front for the next reads.
    private func encodeInSegments(_ item: SourceItem, reader: FolderReader, head: Int, level: Int32,
                                  segment: UnsafeMutableRawBufferPointer, scratch: EncoderScratch) throws -> EncodedFile {
        let step = scratch.buffer.count
        let capacity = segment.count - 1
        var output = ChunkedOutput(encoder: encoder, compressed: true, parameters: parameters)
        try output.write(Deflater.header(level: level))
        var chunker = ContentDefinedChunker(parameters)
        var extracted = Insecure.SHA1()
        var adler: UInt32 = 1
        var size: Int64 = 0
        var filled = 0
        var firstRead: Int? = head
        var ends: [Int] = []
        var ended = false
        while true {
            while !ended && filled < capacity {
                let wanted = min(step, capacity - filled)
                let count = try firstRead ?? encoder.fill(UnsafeMutableRawBufferPointer(rebasing: segment[filled..<filled + wanted]), from: reader)
                firstRead = nil
                ended = count < wanted
                let fresh = UnsafeRawBufferPointer(rebasing: segment[filled..<filled + count])
                extracted.update(bufferPointer: fresh)
                adler = Deflater.adler32(adler, fresh)
                size += Int64(count)
                var position = filled
                filled += count
                while position < filled {
                    let (scanned, cut) = chunker.scan(UnsafeRawBufferPointer(rebasing: segment[position..<filled]))
                    position += scanned
                    if cut { ends.append(position) }
                }
            }
            if ended, (ends.last ?? 0) < filled { ends.append(filled) }
            let chunks = zip([0] + ends.dropLast(), ends).map { $0..<$1 }
            let view = SegmentView(bytes: UnsafeRawBufferPointer(segment))
            try OrderedWorkPool.run(count: chunks.count, jobs: max(1, encoder.jobs), window: chunks.count, work: { index in
                try Self.compressChunk(UnsafeRawBufferPointer(rebasing: view.bytes[chunks[index]]), level: level)
            }, consume: { index, chunk in
                try output.write(chunk.compressed)
                output.endChunk(chunk.digest, size: chunks[index].count)
            })
            if ended { break }
            let open = ends.last ?? 0
            if open < filled {
                UnsafeMutableRawBufferPointer(rebasing: segment[0..<filled - open]).copyMemory(from: UnsafeRawBufferPointer(rebasing: segment[open..<filled]))
            }
            filled -= open
            ends = []
        }
        // What zlib writes to end a stream after a full flush: an empty last block, then the
        // Adler-32 of everything.
        try Deflater(level: level, raw: true).finish { try output.write($0) }
        try output.write(withUnsafeBytes(of: adler.bigEndian) { Array($0) })
        return try output.file(item, size: size, extracted: extracted.finalize())
    }

    /// One chunk's digest, and its raw deflate up to a full flush.
    private static func compressChunk(_ bytes: UnsafeRawBufferPointer, level: Int32) throws -> (digest: ChunkDigest, compressed: [UInt8]) {
        var hasher = ChunkHasher()
        hasher.update(bytes)
        let deflater = Deflater(level: level, raw: true)
        var compressed: [UInt8] = []
        compressed.reserveCapacity(bytes.count / 2)
        try deflater.compress(bytes) { compressed.append(contentsOf: $0) }
        try deflater.flush { compressed.append(contentsOf: $0) }
        return (hasher.digest, compressed)
    }

    /// Streams the file through one of the profile's compressors (or none), flushed at every
    /// boundary, its first bytes `head` already read.
    private func encodeInOneStream(_ item: SourceItem, reader: FolderReader, head: UnsafeRawBufferPointer, compressed: Bool,
                                   scratch: EncoderScratch) throws -> EncodedFile {
        var output = ChunkedOutput(encoder: encoder, compressed: compressed, parameters: parameters)
        let deflater = compressed ? encoder.profile.makeStreamDeflater() : nil
        var extracted = Insecure.SHA1()
        var size: Int64 = 0
        var chunker = ContentDefinedChunker(parameters)
        var chunkHash = ChunkHasher()
        var chunkSize = 0
        func endChunk() throws {
            if let deflater { try deflater.flush { try output.write($0) } }
            output.endChunk(chunkHash.digest, size: chunkSize)
            chunkHash = ChunkHasher()
            chunkSize = 0
        }
        var data = head
        while !data.isEmpty {
            extracted.update(bufferPointer: data)
            size += Int64(data.count)
            var position = 0
            while position < data.count {
                let (count, ends) = chunker.scan(UnsafeRawBufferPointer(rebasing: data[position...]))
                let piece = UnsafeRawBufferPointer(rebasing: data[position..<position + count])
                chunkHash.update(piece)
                try deflater?.compress(piece) { try output.write($0) }
                chunkSize += count
                position += count
                if ends { try endChunk() }
            }
            data = UnsafeRawBufferPointer(rebasing: scratch.buffer[0..<(try encoder.fill(scratch.buffer, from: reader))])
        }
        if chunkSize > 0 { try endChunk() }
        try deflater?.finish { try output.write($0) }
        return try output.file(item, size: size, extracted: extracted.finalize())
    }
}

/// A chunked file's stored bytes as they are made: the scratch file they go to, their sha1, and
/// the chunk table.
private struct ChunkedOutput {
    let encoder: FileEncoder
    let compressed: Bool
    private var table: ChunkTable
    private var spill: FileOutput?
    private var archived = Insecure.SHA1()
    private var length: Int64 = 0
    /// Where the open chunk's stored bytes start: a zlib stream's first chunk, after its
    /// two-byte header.
    private var chunkStart: Int64

    init(encoder: FileEncoder, compressed: Bool, parameters: ChunkParameters) {
        self.encoder = encoder
        self.compressed = compressed
        chunkStart = compressed ? 2 : 0
        table = ChunkTable(parameters: parameters, dataStart: chunkStart)
    }

    /// Compressed bytes, in stream order.
    mutating func write(_ bytes: UnsafeRawBufferPointer) throws {
        if spill == nil { spill = try FileOutput.anonymous(in: encoder.scratchDirectory) }
        archived.update(bufferPointer: bytes)
        length += Int64(bytes.count)
        try spill!.write(bytes)
    }

    mutating func write(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try write($0) }
    }

    /// Ends the open chunk, of `size` bytes, whose compressed bytes (if any) were all written.
    mutating func endChunk(_ digest: ChunkDigest, size: Int) {
        let stored = compressed ? length - chunkStart : Int64(size)
        table.append(ChunkTable.Chunk(digest: digest, size: size, storedLength: Int(stored)))
        chunkStart = compressed ? length : 0
    }

    /// The encoded file, once every byte of it went through: stored (read again from the source
    /// when the package is assembled, as every stored file is) unless compressing made it smaller.
    func file(_ item: SourceItem, size: Int64, extracted digest: Insecure.SHA1Digest) throws -> EncodedFile {
        guard size == item.size else { throw WriteError.sourceChanged(path: item.path.description) }
        guard compressed, let spill, length < size || encoder.mode != .auto else {
            return EncodedFile(size: size, length: size, encoding: .stored, extractedSHA1: digest, archivedSHA1: digest,
                               bytes: .source(item.origin), chunks: table.stored())
        }
        return EncodedFile(size: size, length: length, encoding: .zlib, extractedSHA1: digest, archivedSHA1: archived.finalize(),
                           bytes: .scratch(spill, length), chunks: table)
    }
}

/// A segment's bytes, read by the threads compressing its chunks while the thread that owns the
/// segment waits for them.
// Unchecked: a raw view, not written while any thread reads it (`OrderedWorkPool.run` returns once every chunk is done).
private struct SegmentView: @unchecked Sendable {
    let bytes: UnsafeRawBufferPointer
}
