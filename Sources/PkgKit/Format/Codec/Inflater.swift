internal import CZlib

/// A zlib (RFC 1950) decompressor fed in chunks, through zlib itself: the inflater every platform
/// has, and the one whose messages name what is wrong with a damaged stream. It reads gzip
/// (RFC 1952) too, as HTTP's `Content-Encoding: gzip` carries it.
package final class Inflater: StreamInflater {
    private var stream = z_stream()

    /// An inflater of zlib streams, or with `gzip` of gzip streams.
    package init(gzip: Bool = false) {
        let status = gzip ? CZlib_inflateInitGzip(&stream) : CZlib_inflateInit(&stream)
        precondition(status == Z_OK, "inflateInit failed: \(status)")
    }

    deinit { inflateEnd(&stream) }

    package func reset() {
        inflateReset(&stream)
        stream.avail_in = 0
    }

    package func supply(_ input: UnsafeRawBufferPointer) {
        stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
        stream.avail_in = uInt(input.count)
    }

    package var pendingInput: Int { Int(stream.avail_in) }

    package func inflate(into output: UnsafeMutableRawBufferPointer) -> (count: Int, status: InflateStatus) {
        stream.next_out = output.baseAddress?.assumingMemoryBound(to: Bytef.self)
        stream.avail_out = uInt(min(output.count, Int(UInt32.max)))
        let status = CZlib.inflate(&stream, Z_NO_FLUSH)
        let count = min(output.count, Int(UInt32.max)) - Int(stream.avail_out)
        switch status {
        case Z_OK: return (count, .more)
        case Z_STREAM_END: return (count, .ended)
        case Z_BUF_ERROR: return (count, .needsInput)
        default: return (count, .corrupt(stream.msg.map { String(cString: $0) } ?? "error \(status)"))
        }
    }
}
