import Crypto
import PkgKitSupport

/// Encodes a large file as `FileEncoder` does, and also cuts it into content-defined chunks
/// (`ContentDefinedChunker`), hashing each: compressed, its zlib stream is fully flushed at every
/// boundary, so each chunk's stored bytes decode on their own (see `ChunkTable`). The chunks'
/// digests and lengths become the file's chunk table, with which a client holding an earlier version of
/// the file fetches only the chunks it lacks.
package struct ChunkedFileEncoder {
    package var encoder: FileEncoder
    package var parameters = ChunkParameters.standard

    /// Whether `item` is chunked: a file of at least `smallestChunkedFile` bytes that `profile`
    /// streams anyway. One it compresses in a single libdeflate call (up to 4 MiB at the default
    /// level) stays whole: libdeflate makes it smaller than a flushed zlib stream would, and a
    /// changed one costs at most that much to fetch.
    package static func wants(_ item: SourceItem, profile: DeflateProfile) -> Bool {
        item.size >= ChunkParameters.smallestChunkedFile && item.size > profile.wholeLimit
    }

    /// Encodes `item`, reading it in `scratch.buffer`-sized pieces. The compressed bytes always
    /// go to a scratch file: these files are a megabyte or more.
    package func encode(_ item: SourceItem, scratch: EncoderScratch) throws -> EncodedFile {
        let buffer = scratch.buffer
        let reader = FolderReader(items: [item])
        _ = try reader.nextEntry()
        var filled = try encoder.fill(buffer, from: reader)
        var compress = encoder.mode == .zlib
        if encoder.mode == .auto {
            let sample = UnsafeRawBufferPointer(rebasing: buffer[0..<min(filled, FileEncoder.sampleBytes)])
            compress = try FileEncoder.worthCompressing(sample, scratch: scratch)
        }
        let deflater = compress ? encoder.profile.makeStreamDeflater() : nil
        let spill = compress ? try FileOutput.anonymous(in: encoder.scratchDirectory) : nil
        var archived = Insecure.SHA1(), extracted = Insecure.SHA1()
        var length: Int64 = 0, size: Int64 = 0
        let sink: (UnsafeRawBufferPointer) throws -> Void = { block in
            archived.update(bufferPointer: block)
            length += Int64(block.count)
            try spill!.write(block)
        }
        var table = ChunkTable(parameters: parameters, dataStart: compress ? 2 : 0)
        var chunker = ContentDefinedChunker(parameters)
        var chunkHash = ChunkHasher()
        // Where the current chunk's stored bytes start (after the zlib header for the first).
        var chunkStart: Int64 = compress ? 2 : 0
        var chunkSize = 0
        func endChunk() throws {
            if let deflater { try deflater.flush(sink: sink) }
            let stored = compress ? length - chunkStart : Int64(chunkSize)
            table.append(ChunkTable.Chunk(digest: chunkHash.digest, size: chunkSize, storedLength: Int(stored)))
            chunkStart = compress ? length : 0
            chunkHash = ChunkHasher()
            chunkSize = 0
        }
        while filled > 0 {
            let data = UnsafeRawBufferPointer(rebasing: buffer[0..<filled])
            extracted.update(bufferPointer: data)
            size += Int64(filled)
            var position = 0
            while position < filled {
                let (count, ends) = chunker.scan(UnsafeRawBufferPointer(rebasing: data[position...]))
                let piece = UnsafeRawBufferPointer(rebasing: data[position..<position + count])
                chunkHash.update(piece)
                try deflater?.compress(piece, sink: sink)
                chunkSize += count
                position += count
                if ends { try endChunk() }
            }
            filled = try encoder.fill(buffer, from: reader)
        }
        if chunkSize > 0 { try endChunk() }
        try deflater?.finish(sink: sink)
        guard size == item.size else { throw WriteError.sourceChanged(path: item.path.description) }
        let digest = extracted.finalize()
        guard let spill, length < size || encoder.mode != .auto else {
            // Stored: read again from the source at assembly, as every stored file is.
            return EncodedFile(size: size, length: size, encoding: .stored, extractedSHA1: digest, archivedSHA1: digest,
                               bytes: .source(item.origin), chunks: table.stored())
        }
        return EncodedFile(size: size, length: length, encoding: .zlib, extractedSHA1: digest, archivedSHA1: archived.finalize(),
                           bytes: .scratch(spill, length), chunks: table)
    }
}
