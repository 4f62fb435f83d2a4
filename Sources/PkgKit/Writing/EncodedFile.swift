import Crypto
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One file's data after encoding: its sizes, digests and where the stored bytes wait.
struct EncodedFile {
    /// Where the bytes that go into the package are until the package is assembled.
    enum Bytes {
        /// Compressed bytes held in memory (small files).
        case memory([UInt8])
        /// Compressed bytes in a scratch file (large files).
        case scratch(FileOutput, Int64)
        /// Stored data: read again from the source at assembly, and checked against `extractedSHA1`.
        case source(SourceItem.Origin)
        /// No data (an empty file).
        case empty
    }

    var size: Int64
    var length: Int64
    var encoding: DataEncoding
    var extractedSHA1: String
    var archivedSHA1: String
    var bytes: Bytes
}

/// Compresses or stores one file, streaming, computing both sha1 digests in the same pass.
struct FileEncoder {
    var mode: CompressionMode
    var level: Int32
    var scratchDirectory: String
    /// Compressed output kept in memory up to this size, then spilled to a scratch file.
    static let memoryLimit = 4 << 20
    /// How much of a file `auto` compresses to decide whether it shrinks.
    static let sampleBytes = 64 * 1024
    /// `auto` stores a file whose sample does not shrink below this fraction.
    static let worthwhileRatio = 0.97

    /// Encodes one file, using `deflater` (reset first) for its zlib stream.
    func encode(_ item: SourceItem, buffer: UnsafeMutableRawBufferPointer, deflater: Deflater) throws -> EncodedFile {
        let reader = FolderReader(items: [item])
        _ = try reader.nextEntry()
        var first = try fill(buffer, from: reader)
        if first == 0 {
            guard item.size == 0 else { throw WriteError.sourceChanged(path: item.path.description) }
            let empty = Insecure.SHA1().finalize().hexString
            return EncodedFile(size: 0, length: 0, encoding: .stored, extractedSHA1: empty, archivedSHA1: empty, bytes: .empty)
        }
        let sample = UnsafeRawBufferPointer(rebasing: buffer[0..<min(first, Self.sampleBytes)])
        var compress = mode == .zlib
        if mode == .auto {
            // Small files are compressed outright below; for the rest a quick level-1 pass over
            // the sample tells whether zlib is worth its time.
            compress = try first < Self.sampleBytes || Self.compressedSize(sample) < Int(Double(sample.count) * Self.worthwhileRatio)
        }
        if !compress {
            var extracted = Insecure.SHA1()
            var size: Int64 = 0
            while first > 0 {
                extracted.update(bufferPointer: UnsafeRawBufferPointer(rebasing: buffer[0..<first]))
                size += Int64(first)
                first = try fill(buffer, from: reader)
            }
            guard size == item.size else { throw WriteError.sourceChanged(path: item.path.description) }
            let digest = extracted.finalize().hexString
            return EncodedFile(size: size, length: size, encoding: .stored, extractedSHA1: digest, archivedSHA1: digest, bytes: .source(item.origin))
        }
        var extracted = Insecure.SHA1()
        var archived = Insecure.SHA1()
        var size: Int64 = 0
        var length: Int64 = 0
        var memory: [UInt8] = []
        var scratch: FileOutput?
        deflater.reset()
        let sink: (UnsafeRawBufferPointer) throws -> Void = { block in
            archived.update(bufferPointer: block)
            length += Int64(block.count)
            if let scratch {
                try scratch.write(block)
            } else if memory.count + block.count > Self.memoryLimit {
                let file = try FileOutput.anonymous(in: scratchDirectory)
                try file.write(memory)
                try file.write(block)
                memory = []
                scratch = file
            } else {
                memory.append(contentsOf: block)
            }
        }
        while first > 0 {
            let chunk = UnsafeRawBufferPointer(rebasing: buffer[0..<first])
            extracted.update(bufferPointer: chunk)
            size += Int64(first)
            try deflater.compress(chunk, sink: sink)
            first = try fill(buffer, from: reader)
        }
        try deflater.finish(sink: sink)
        guard size == item.size else { throw WriteError.sourceChanged(path: item.path.description) }
        let extractedDigest = extracted.finalize().hexString
        if mode == .auto && length >= size {
            // zlib made it larger after all: store it, as the digest of the stored bytes is known.
            return EncodedFile(size: size, length: size, encoding: .stored, extractedSHA1: extractedDigest, archivedSHA1: extractedDigest, bytes: .source(item.origin))
        }
        let bytes: EncodedFile.Bytes = scratch.map { .scratch($0, length) } ?? .memory(memory)
        return EncodedFile(size: size, length: length, encoding: .zlib, extractedSHA1: extractedDigest,
                           archivedSHA1: archived.finalize().hexString, bytes: bytes)
    }

    /// Fills as much of `buffer` as the file has left; a short read is not the end of a file.
    private func fill(_ buffer: UnsafeMutableRawBufferPointer, from reader: FolderReader) throws -> Int {
        var filled = 0
        while filled < buffer.count {
            let count = try reader.readData(into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]))
            if count == 0 { break }
            filled += count
        }
        return filled
    }

    private static func compressedSize(_ sample: UnsafeRawBufferPointer) throws -> Int {
        let deflater = Deflater(level: 1)
        var total = 0
        try deflater.compress(sample) { total += $0.count }
        try deflater.finish { total += $0.count }
        return total
    }
}
