internal import CZlib
import PkgKitSupport

/// A zlib (RFC 1950) compressor fed in chunks: the encoding xar calls `application/x-gzip`.
package final class Deflater {
    private var stream = z_stream()
    private let output: UnsafeMutableRawBufferPointer

    /// Starts a stream at `level` (1–9).
    package init(level: Int32, outputCapacity: Int = 64 * 1024) {
        output = UnsafeMutableRawBufferPointer.allocate(byteCount: outputCapacity, alignment: 16)
        let status = CZlib_deflateInit(&stream, level)
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
