import CZlib
import Foundation

/// gzip (RFC 1952) streams for tests of `Content-Encoding: gzip`: what a server compressing on
/// the fly sends, and a bomb, a small stream that inflates to far more than any bound.
public enum Gzip {
    /// `data` as one gzip member.
    public static func compress(_ data: Data) -> Data {
        stream(count: data.count) { offset, length in data.subdata(in: offset ..< offset + length) }
    }

    /// A gzip member of `decodedBytes` spaces, compressed at the best level: a few hundred
    /// kilobytes on the wire for hundreds of megabytes decoded, built without holding them.
    public static func bomb(decodedBytes: Int) -> Data {
        let block = Data(repeating: 0x20, count: 1 << 20)
        return stream(count: decodedBytes) { _, length in length == block.count ? block : block.prefix(length) }
    }

    /// A gzip member of `count` bytes that `piece(offset, length)` gives, a MiB at a time.
    private static func stream(count: Int, _ piece: (Int, Int) -> Data) -> Data {
        var output = Data([0x1F, 0x8B, 0x08, 0, 0, 0, 0, 0, 0x02, 0xFF])
        var deflater = z_stream()
        precondition(CZlib_deflateInitRaw(&deflater, 9) == Z_OK)
        defer { deflateEnd(&deflater) }
        var crc = crc32(0, nil, 0)
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var offset = 0
        repeat {
            let length = min(1 << 20, count - offset)
            var input = piece(offset, length)
            offset += length
            let flush = offset == count ? Z_FINISH : Z_NO_FLUSH
            input.withUnsafeMutableBytes { raw in
                let bytes = raw.bindMemory(to: Bytef.self)
                crc = crc32(crc, bytes.baseAddress, uInt(bytes.count))
                deflater.next_in = bytes.baseAddress
                deflater.avail_in = uInt(bytes.count)
                var status: Int32
                repeat {
                    status = buffer.withUnsafeMutableBufferPointer { out in
                        deflater.next_out = out.baseAddress
                        deflater.avail_out = uInt(out.count)
                        let status = deflate(&deflater, flush)
                        output.append(out.baseAddress!, count: out.count - Int(deflater.avail_out))
                        return status
                    }
                } while deflater.avail_in > 0 || (flush == Z_FINISH && status != Z_STREAM_END)
            }
        } while offset < count
        for value in [UInt32(truncatingIfNeeded: crc), UInt32(truncatingIfNeeded: count)] {
            withUnsafeBytes(of: value.littleEndian) { output.append(contentsOf: $0) }
        }
        return output
    }
}
