import Crypto
import Foundation
import Testing
@testable import PkgKit
@testable import PkgKitFormat

/// A large file's chunks are compressed on several threads, each on its own, yet the stored
/// bytes must be the very stream one zlib compressor writes when fully flushed at the same
/// boundaries: the same package whatever `--jobs`, and the same as before the threads.
@Suite struct ChunkedFileEncoderTests {
    /// Ten megabytes of text-like lines that compress, and do not repeat exactly.
    static let text: Data = {
        var random = UInt64(0x5EED)
        func next() -> UInt64 {
            random ^= random << 13; random ^= random >> 7; random ^= random << 17
            return random
        }
        let words = ["level", "score", "asset", "chapter", "texture", "audio", "page", "index", "map", "quest", "voice", "track"]
        var text = ""
        text.reserveCapacity(10 << 20)
        while text.utf8.count < 10 << 20 {
            text += "\(next() % 100_000),\(words[Int(next() % 12)]),\(words[Int(next() % 12)]),\(Double(next() % 10_000) / 100)\n"
        }
        return Data(text.utf8)
    }()

    /// The file's stored bytes and chunk table, encoded by `profile` with `jobs` threads.
    func encode(_ path: String, profile: DeflateProfile, jobs: Int, folder: String) throws -> (bytes: Data, chunks: ChunkTable?, encoding: DataEncoding) {
        let item = try FolderWalker.item(at: Array(path.utf8), packagePath: Array("Contents/big.csv".utf8))
        let encoder = FileEncoder(mode: .auto, profile: profile, scratchDirectory: folder, chunking: true, jobs: jobs)
        let file = try encoder.encode(item, scratch: EncoderScratch(profile: profile))
        guard case .scratch(let spill, let length) = file.bytes else {
            Issue.record("a compressible large file should be compressed into a scratch file")
            return (Data(), file.chunks, file.encoding)
        }
        var bytes = Data()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        try spill.copy(offset: 0, length: length, buffer: buffer) { bytes.append(contentsOf: $0) }
        return (bytes, file.chunks, file.encoding)
    }

    func digest(_ data: Data) -> String { SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined() }

    @Test(arguments: [Int32(5), 9])
    func chunksCompressedApartMakeTheOneStreamsBytes(level: Int32) throws {
        let folder = FileManager.default.temporaryDirectory.path + "/chunked-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/big.csv"
        try Self.text.write(to: URL(fileURLWithPath: path))

        // Without libdeflate there are no segment buffers: one zlib stream, flushed at each chunk.
        let oneStream = try encode(path, profile: DeflateProfile(level: level, libdeflate: false, isal: false), jobs: 1, folder: folder)
        #expect(oneStream.encoding == .zlib)
        let chunkCount = try #require(oneStream.chunks).count
        #expect(chunkCount > 12)
        for jobs in [1, 2, 4] {
            let apart = try encode(path, profile: DeflateProfile(level: level, libdeflate: true, isal: false), jobs: jobs, folder: folder)
            // Compared by digest: a failing comparison of megabytes would be diffed byte by byte.
            #expect(digest(apart.bytes) == digest(oneStream.bytes), "jobs \(jobs)")
            #expect(apart.bytes.count == oneStream.bytes.count, "jobs \(jobs)")
            #expect(apart.chunks == oneStream.chunks, "jobs \(jobs)")
        }
        // And the stream is whole: it inflates to the file.
        let inflated = try #require(ZlibStream.inflateFirst(oneStream.bytes, keepOutput: true))
        #expect(digest(inflated.output) == digest(Self.text))
        #expect(inflated.consumed == oneStream.bytes.count)
    }
}
