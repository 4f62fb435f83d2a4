import Foundation
internal import CZlib

/// Inflates the zlib stream at the start of some bytes, for the few places that read xar data
/// without libarchive (inspect's plist, the merged-copies check).
enum ZlibStream {
    /// The stream's decoded bytes (dropped when `keepOutput` is false) and how many input bytes
    /// it used; nil when the bytes do not start with a complete stream or decode past `limit`.
    static func inflateFirst(_ bytes: Data, keepOutput: Bool, limit: Int = .max) -> (output: Data, consumed: Int)? {
        var output = Data()
        var produced = 0
        let chunk = UnsafeMutablePointer<Bytef>.allocate(capacity: 64 * 1024)
        defer { chunk.deallocate() }
        return bytes.withUnsafeBytes { raw -> (Data, Int)? in
            guard let base = raw.baseAddress else { return nil }
            var stream = z_stream()
            guard CZlib_inflateInit(&stream) == Z_OK else { return nil }
            defer { inflateEnd(&stream) }
            stream.next_in = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: Bytef.self))
            stream.avail_in = uInt(raw.count)
            while true {
                stream.next_out = chunk
                stream.avail_out = 64 * 1024
                let status = inflate(&stream, Z_NO_FLUSH)
                let count = 64 * 1024 - Int(stream.avail_out)
                produced += count
                if produced > limit { return nil }
                if keepOutput { output.append(chunk, count: count) }
                if status == Z_STREAM_END { return (output, raw.count - Int(stream.avail_in)) }
                if status != Z_OK { return nil }
            }
        }
    }
}
