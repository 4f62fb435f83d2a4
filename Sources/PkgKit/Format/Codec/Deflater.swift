internal import CZlib

/// A zlib (RFC 1950) compressor fed in chunks: the encoding xar calls `application/x-gzip`.
package final class Deflater {
    private var stream = z_stream()
    private let output: UnsafeMutableRawBufferPointer

    /// Starts a stream at `level` (1–9); a `raw` one is bare deflate, without the zlib header
    /// and trailer (the middle of a zlib stream, made elsewhere).
    package init(level: Int32, raw: Bool = false, outputCapacity: Int = 64 * 1024) {
        output = UnsafeMutableRawBufferPointer.allocate(byteCount: outputCapacity, alignment: 16)
        let status = raw ? CZlib_deflateInitRaw(&stream, level) : CZlib_deflateInit(&stream, level)
        precondition(status == Z_OK, "deflateInit failed: \(status)")
    }

    deinit {
        deflateEnd(&stream)
        output.deallocate()
    }

    /// Compresses `input`, handing each produced block to `sink`.
    package func compress(_ input: UnsafeRawBufferPointer, sink: (UnsafeRawBufferPointer) throws -> Void) throws {
        try run(input, flush: Z_NO_FINISH_MARKER, sink: sink)
    }

    package func flush(sink: (UnsafeRawBufferPointer) throws -> Void) throws {
        try run(UnsafeRawBufferPointer(start: nil, count: 0), flush: Z_FULL_FLUSH, sink: sink)
    }

    /// Ends the stream, handing the last blocks to `sink`.
    package func finish(sink: (UnsafeRawBufferPointer) throws -> Void) throws {
        try run(UnsafeRawBufferPointer(start: nil, count: 0), flush: Z_FINISH, sink: sink)
    }

    /// Makes the stream ready for another independent input, keeping its allocations.
    package func reset() {
        deflateReset(&stream)
    }

    private let Z_NO_FINISH_MARKER = Z_NO_FLUSH

    /// The two bytes that start a zlib stream of `level` (RFC 1950: deflate, a 32 KiB window, the
    /// level's class, and the check bits), as `deflateInit` writes them.
    package static func header(level: Int32) -> [UInt8] {
        let levelClass: UInt16 = level < 2 ? 0 : level < 6 ? 1 : level == 6 ? 2 : 3
        var header: UInt16 = 0x78 << 8 | levelClass << 6
        header += 31 - header % 31
        return [UInt8(header >> 8), UInt8(header & 0xFF)]
    }

    /// The Adler-32 of `bytes` continued from `checksum` (1 to start): a zlib stream's trailer.
    static func adler32(_ checksum: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return checksum }
        return UInt32(CZlib.adler32_z(uLong(checksum), base.assumingMemoryBound(to: Bytef.self), z_size_t(bytes.count)))
    }

    private func run(_ input: UnsafeRawBufferPointer, flush: Int32, sink: (UnsafeRawBufferPointer) throws -> Void) throws {
        stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
        stream.avail_in = uInt(input.count)
        repeat {
            stream.next_out = output.baseAddress!.assumingMemoryBound(to: Bytef.self)
            stream.avail_out = uInt(output.count)
            let status = deflate(&stream, flush)
            guard status == Z_OK || status == Z_STREAM_END || status == Z_BUF_ERROR else {
                throw WriteError.compression("deflate failed (\(status))")
            }
            let produced = output.count - Int(stream.avail_out)
            if produced > 0 { try sink(UnsafeRawBufferPointer(rebasing: output[0..<produced])) }
            if flush == Z_FINISH && status == Z_STREAM_END { return }
        } while stream.avail_out == 0 || (flush == Z_FINISH)
    }
}

extension Deflater: StreamDeflater {}
