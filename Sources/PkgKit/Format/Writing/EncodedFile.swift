import Crypto
import Foundation
import PkgKitSupport

/// One file's data after encoding: its sizes, digests and where the stored bytes wait.
struct EncodedFile {
    /// Where the bytes that go into the package are until the package is assembled.
    enum Bytes {
        /// The bytes to store, held in memory: compressed ones, or a small file stored as it is.
        case memory([UInt8])
        /// Compressed bytes in a scratch file (large files).
        case scratch(FileOutput, Int64)
        /// Stored data: read again from the source at assembly, and checked against `extractedSHA1`.
        case source(SourceItem.Origin)
        /// No data (an empty file).
        case empty
        /// None of its own: an earlier file has the same bytes (see `HeapCoalescing`).
        case duplicate
    }

    package var size: Int64
    package var length: Int64
    package var encoding: DataEncoding
    /// Binary, not hex: 100,000 files would otherwise hold 200,000 strings until the end.
    var extractedSHA1: Insecure.SHA1Digest
    var archivedSHA1: Insecure.SHA1Digest
    package var bytes: Bytes
    /// How a large file was cut into chunks, for clients that fetch only the chunks they lack (see `ChunkTable`).
    package var chunks: ChunkTable? = nil
    /// Set for a file that may have a twin in the package (see `HeapCoalescing`).
    var contentKey: ContentKey? = nil

    package init(size: Int64, length: Int64, encoding: DataEncoding, extractedSHA1: Insecure.SHA1Digest, archivedSHA1: Insecure.SHA1Digest,
                 bytes: Bytes, chunks: ChunkTable? = nil, contentKey: ContentKey? = nil) {
        (self.size, self.length, self.encoding, self.extractedSHA1, self.archivedSHA1) = (size, length, encoding, extractedSHA1, archivedSHA1)
        (self.bytes, self.chunks, self.contentKey) = (bytes, chunks, contentKey)
    }

    /// A file whose bytes, of sha1 `sha1`, an earlier file of the package already has.
    package static func duplicate(_ key: ContentKey, sha1: Insecure.SHA1Digest) -> EncodedFile {
        EncodedFile(size: key.size, length: 0, encoding: .stored, extractedSHA1: sha1, archivedSHA1: sha1,
                    bytes: .duplicate, contentKey: key)
    }
}

/// What one encoding thread keeps from file to file: its buffers and compressors, so that a
/// package of 100,000 files does not set up zlib (or map fresh buffers) 100,000 times.
final class EncoderScratch {
    /// Streaming reads, `XarWriter.bufferSize`.
    package let buffer: UnsafeMutableRawBufferPointer
    /// The profile's streaming engine, for files over its `wholeLimit`.
    package let deflater: StreamDeflater
    /// The profile's one-call engine (libdeflate), for files up to its `wholeLimit`; nil where
    /// libdeflate is not linked.
    package let whole: WholeBufferDeflater?
    /// libdeflate at level 1, for `auto`'s trial of a file's first bytes.
    let sampler: WholeBufferDeflater?
    package private(set) var input: UnsafeMutableRawBufferPointer?
    package private(set) var output: UnsafeMutableRawBufferPointer?
    /// Opens the files this scratch encodes, keeping their folder open for the next.
    package let opener = SourceFileOpener()

    package init(profile: DeflateProfile) {
        buffer = .allocate(byteCount: XarWriter.bufferSize, alignment: 16)
        deflater = profile.makeStreamDeflater()
        whole = profile.makeWholeDeflater()
        sampler = whole == nil ? nil : WholeBufferDeflater(level: 1)
    }

    deinit {
        buffer.deallocate()
        input?.deallocate()
        output?.deallocate()
    }

    /// Buffers for a whole file of up to `FileEncoder.wholeLimit` bytes and its compressed form.
    func wholeBuffers() -> (input: UnsafeMutableRawBufferPointer, output: UnsafeMutableRawBufferPointer)? {
        guard let whole else { return nil }
        if input == nil {
            input = .allocate(byteCount: FileEncoder.wholeLimit + 1, alignment: 16)
            output = .allocate(byteCount: max(whole.bound(FileEncoder.wholeLimit), whole.bound(FileEncoder.sampleBytes)), alignment: 16)
        }
        return (input!, output!)
    }

    /// Scratch kept between batches, one per thread at a time.
    // Unchecked: a scratch owns raw buffers (not Sendable); one taken out is used by one thread until put back.
    final class Pool: @unchecked Sendable {
        private let free = LockedValue<[EncoderScratch]>([])
        let profile: DeflateProfile

        package init(profile: DeflateProfile) { self.profile = profile }

        package func take() -> EncoderScratch {
            free.withLock { $0.popLast() } ?? EncoderScratch(profile: profile)
        }

        package func give(_ scratch: EncoderScratch) {
            free.withLock { $0.append(scratch) }
        }
    }
}

/// Compresses or stores one file, computing both sha1 digests in the same pass: in one call with
/// libdeflate when the profile gives the file to it, else streaming.
struct FileEncoder {
    package var mode: CompressionMode
    /// Which engine compresses which file.
    var profile: DeflateProfile
    package var scratchDirectory: String
    /// Whether large files are cut into chunks (see `ChunkedFileEncoder`).
    var chunking = false
    /// Threads a large file's chunks may be compressed on (see `ChunkedFileEncoder`).
    package var jobs = 1

    package init(mode: CompressionMode, profile: DeflateProfile, scratchDirectory: String, chunking: Bool = false, jobs: Int = 1) {
        (self.mode, self.profile, self.scratchDirectory, self.chunking, self.jobs) = (mode, profile, scratchDirectory, chunking, jobs)
    }
    /// Compressed output kept in memory up to this size, then spilled to a scratch file.
    static let memoryLimit = Int(DeflateProfile.wholeBufferLimit)
    /// The largest file compressed in one call: two such buffers per thread.
    static let wholeLimit = Int(DeflateProfile.wholeBufferLimit)
    /// How much of a file `auto` compresses to decide whether it shrinks, when its first
    /// `quickSampleBytes` do not.
    static let sampleBytes = 64 * 1024
    /// How much of a file `auto` compresses first: enough to tell text and data from JPEG, PNG
    /// or zip, for a quarter of the work.
    static let quickSampleBytes = 16 * 1024
    /// `auto` stores a file whose sample does not shrink below this fraction.
    static let worthwhileRatio = 0.97

    /// Encodes item `index` of the package with `scratch`'s buffers and compressors; with
    /// `coalescing`, a file whose bytes an earlier item has comes back as a `duplicate`, not
    /// encoded.
    package func encode(_ item: SourceItem, index: Int = 0, coalescing: HeapCoalescing? = nil, scratch: EncoderScratch) throws -> EncodedFile {
        let coalescing = coalescing.flatMap { $0.isCandidate(size: item.size) ? $0 : nil }
        let chunked = chunking && ChunkedFileEncoder.wants(item, profile: profile)
        if !chunked, mode != .none, item.size <= profile.wholeLimit, item.size > 0, let buffers = scratch.wholeBuffers() {
            return try encodeWhole(item, index: index, coalescing: coalescing, scratch: scratch, input: buffers.input, output: buffers.output)
        }
        let streamed = {
            chunked ? try ChunkedFileEncoder(encoder: self).encode(item, scratch: scratch) : try encodeStreaming(item, scratch: scratch)
        }
        guard let coalescing else { return try streamed() }
        // A large file is read once more to learn whether it is a duplicate: far cheaper than
        // compressing it for nothing.
        let (key, sha1) = try contentKey(of: item, scratch: scratch)
        return try claim(key, sha1: sha1, index: index, coalescing: coalescing) {
            let file = try streamed()
            guard file.size == key.size, file.extractedSHA1 == sha1 else { throw WriteError.sourceChanged(path: item.path.description) }
            return file
        }
    }

    /// Item `index`, whose bytes have `key` and `sha1`: a `duplicate` when an earlier item has
    /// them, else `encode`'s file, keyed so that later copies find it.
    private func claim(_ key: ContentKey, sha1: Insecure.SHA1Digest, index: Int, coalescing: HeapCoalescing,
                       encode: () throws -> EncodedFile) throws -> EncodedFile {
        if coalescing.isDuplicate(key, index: index) { return .duplicate(key, sha1: sha1) }
        var file = try encode()
        file.contentKey = key
        return file
    }

    /// The file's key and sha1, read through `buffer`.
    private func contentKey(of item: SourceItem, scratch: EncoderScratch) throws -> (ContentKey, Insecure.SHA1Digest) {
        let buffer = scratch.buffer
        let reader = FolderReader(items: [item], opener: scratch.opener)
        _ = try reader.nextEntry()
        var sha1 = Insecure.SHA1(), sha256 = SHA256()
        var size: Int64 = 0
        while case let count = try fill(buffer, from: reader), count > 0 {
            let block = UnsafeRawBufferPointer(rebasing: buffer[0..<count])
            sha1.update(bufferPointer: block)
            sha256.update(bufferPointer: block)
            size += Int64(count)
        }
        guard size == item.size else { throw WriteError.sourceChanged(path: item.path.description) }
        return (ContentKey(sha256: sha256.finalize(), size: size), sha1.finalize())
    }

    /// The whole file read into memory, hashed, and compressed in one libdeflate call.
    private func encodeWhole(_ item: SourceItem, index: Int, coalescing: HeapCoalescing?, scratch: EncoderScratch,
                             input: UnsafeMutableRawBufferPointer, output: UnsafeMutableRawBufferPointer) throws -> EncodedFile {
        let reader = FolderReader(items: [item], opener: scratch.opener)
        _ = try reader.nextEntry()
        // One byte more than expected shows a file that grew.
        let size = try fill(UnsafeMutableRawBufferPointer(rebasing: input[0..<Int(item.size) + 1]), from: reader)
        guard size == Int(item.size) else { throw WriteError.sourceChanged(path: item.path.description) }
        let data = UnsafeRawBufferPointer(rebasing: input[0..<size])
        var extracted = Insecure.SHA1()
        extracted.update(bufferPointer: data)
        let digest = extracted.finalize()
        guard let coalescing else { return try compressWhole(item, data: data, digest: digest, scratch: scratch, output: output) }
        var sha256 = SHA256()
        sha256.update(bufferPointer: data)
        let key = ContentKey(sha256: sha256.finalize(), size: Int64(size))
        return try claim(key, sha1: digest, index: index, coalescing: coalescing) {
            try compressWhole(item, data: data, digest: digest, scratch: scratch, output: output)
        }
    }

    /// Compresses a file held whole in `data` (or stores it, when it does not shrink).
    private func compressWhole(_ item: SourceItem, data: UnsafeRawBufferPointer, digest: Insecure.SHA1Digest, scratch: EncoderScratch,
                               output: UnsafeMutableRawBufferPointer) throws -> EncodedFile {
        let size = data.count
        if mode == .auto && size >= Self.sampleBytes, scratch.sampler != nil,
           try !Self.worthCompressing(UnsafeRawBufferPointer(rebasing: data[0..<Self.sampleBytes]), scratch: scratch) {
            return storedWhole(data, digest: digest, origin: item.origin)
        }
        let length = scratch.whole!.compress(data, into: output)
        guard length > 0 else { throw WriteError.compression("libdeflate could not compress \(item.path)") }
        if mode == .auto && length >= size {
            return storedWhole(data, digest: digest, origin: item.origin)
        }
        let compressed = UnsafeRawBufferPointer(rebasing: output[0..<length])
        var archived = Insecure.SHA1()
        archived.update(bufferPointer: compressed)
        let bytes: EncodedFile.Bytes
        if length > Self.memoryLimit {
            let file = try FileOutput.anonymous(in: scratchDirectory)
            try file.write(compressed)
            bytes = .scratch(file, Int64(length))
        } else {
            bytes = .memory(Array(compressed))
        }
        return EncodedFile(size: Int64(size), length: Int64(length), encoding: .zlib, extractedSHA1: digest,
                           archivedSHA1: archived.finalize(), bytes: bytes)
    }

    /// A file read whole that is stored as it is. A small one travels in memory with the
    /// compressed files, so that it reaches the package in the same in-kernel copy as they do,
    /// instead of being opened and copied again on its own.
    private func storedWhole(_ data: UnsafeRawBufferPointer, digest: Insecure.SHA1Digest, origin: SourceItem.Origin) -> EncodedFile {
        let bytes: EncodedFile.Bytes = data.count < DeflateProfile.smallFile ? .memory(Array(data)) : .source(origin)
        return EncodedFile(size: Int64(data.count), length: Int64(data.count), encoding: .stored, extractedSHA1: digest, archivedSHA1: digest, bytes: bytes)
    }

    /// Streams the file through the profile's streaming engine (or stores it), in
    /// `scratch.buffer`-sized reads.
    private func encodeStreaming(_ item: SourceItem, scratch: EncoderScratch) throws -> EncodedFile {
        let buffer = scratch.buffer
        let deflater = scratch.deflater
        let reader = FolderReader(items: [item], opener: scratch.opener)
        _ = try reader.nextEntry()
        var first = try fill(buffer, from: reader)
        if first == 0 {
            guard item.size == 0 else { throw WriteError.sourceChanged(path: item.path.description) }
            let empty = Insecure.SHA1().finalize()
            return EncodedFile(size: 0, length: 0, encoding: .stored, extractedSHA1: empty, archivedSHA1: empty, bytes: .empty)
        }
        if try !compresses(UnsafeRawBufferPointer(rebasing: buffer[0..<first]), scratch: scratch) {
            var extracted = Insecure.SHA1()
            var size: Int64 = 0
            while first > 0 {
                extracted.update(bufferPointer: UnsafeRawBufferPointer(rebasing: buffer[0..<first]))
                size += Int64(first)
                first = try fill(buffer, from: reader)
            }
            guard size == item.size else { throw WriteError.sourceChanged(path: item.path.description) }
            let digest = extracted.finalize()
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
        let extractedDigest = extracted.finalize()
        if mode == .auto && length >= size {
            // zlib made it larger after all: store it, as the digest of the stored bytes is known.
            return EncodedFile(size: size, length: size, encoding: .stored, extractedSHA1: extractedDigest, archivedSHA1: extractedDigest, bytes: .source(item.origin))
        }
        let bytes: EncodedFile.Bytes = scratch.map { .scratch($0, length) } ?? .memory(memory)
        return EncodedFile(size: size, length: length, encoding: .zlib, extractedSHA1: extractedDigest,
                           archivedSHA1: archived.finalize(), bytes: bytes)
    }

    /// Fills as much of `buffer` as the file has left; a short read is not the end of a file.
    func fill(_ buffer: UnsafeMutableRawBufferPointer, from reader: FolderReader) throws -> Int {
        var filled = 0
        while filled < buffer.count {
            let count = try reader.readData(into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]))
            if count == 0 { break }
            filled += count
        }
        return filled
    }

    /// Whether a file that starts with `head` is compressed, by the mode: under `auto`, a file
    /// shorter than the sample is compressed outright; for the rest a quick level-1 pass over
    /// the sample tells whether zlib is worth its time (`worthCompressing`).
    package func compresses(_ head: UnsafeRawBufferPointer, scratch: EncoderScratch) throws -> Bool {
        guard mode == .auto else { return mode == .zlib }
        guard head.count >= Self.sampleBytes else { return true }
        return try Self.worthCompressing(UnsafeRawBufferPointer(rebasing: head[0..<Self.sampleBytes]), scratch: scratch)
    }

    /// Whether `auto` compresses a file that starts with `head` (up to `sampleBytes`): a quick
    /// level-1 pass over its first `quickSampleBytes` settles most files; one whose start does
    /// not shrink (a header, a thumbnail, or truly compressed data) is tried on all of `head`.
    /// A file found worth it that does not shrink after all is still stored.
    static func worthCompressing(_ head: UnsafeRawBufferPointer, scratch: EncoderScratch) throws -> Bool {
        func shrinks(_ count: Int) throws -> Bool {
            let sample = UnsafeRawBufferPointer(rebasing: head[0..<count])
            return try compressedSize(sample, scratch: scratch) < Int(Double(count) * worthwhileRatio)
        }
        if head.count > quickSampleBytes, try shrinks(quickSampleBytes) { return true }
        return try shrinks(head.count)
    }

    static func compressedSize(_ sample: UnsafeRawBufferPointer, scratch: EncoderScratch) throws -> Int {
        if let sampler = scratch.sampler, let (_, output) = scratch.wholeBuffers() {
            let count = sampler.compress(sample, into: output)
            return count == 0 ? sample.count : count
        }
        let deflater = Deflater(level: 1)
        var total = 0
        try deflater.compress(sample) { total += $0.count }
        try deflater.finish { total += $0.count }
        return total
    }
}

// Unchecked: an immutable value of 20 bytes (no references) that swift-crypto 3 does not declare Sendable.
extension Insecure.SHA1Digest: @retroactive @unchecked Sendable {}
