import Foundation
internal import CZlib

/// Reads one small member of a xar straight from its heap, for `inspect`, which describes a
/// package from its TOC without streaming every member through libarchive.
enum XarEntryData {
    /// The unpacked bytes of `entry` (zlib or stored), or nil when they cannot be had within `limit`.
    static func read(_ entry: XarTableOfContents.Entry, from path: String, heapStart: Int64, limit: Int) -> Data? {
        guard let length = entry.length, let offset = entry.offset else { return Data() }
        guard length >= 0, length <= Int64(limit), offset >= 0,
              let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard (try? handle.seek(toOffset: UInt64(heapStart + offset))) != nil,
              let stored = try? handle.read(upToCount: Int(length)), stored.count == Int(length) else { return nil }
        switch entry.encoding ?? "application/octet-stream" {
        case "application/octet-stream":
            return stored
        case "application/x-gzip":
            return inflate(stored, limit: limit)
        default:
            return nil
        }
    }

    private static func inflate(_ stored: Data, limit: Int) -> Data? {
        var output = Data()
        let chunk = UnsafeMutablePointer<Bytef>.allocate(capacity: 64 * 1024)
        defer { chunk.deallocate() }
        return stored.withUnsafeBytes { raw -> Data? in
            guard let base = raw.baseAddress else { return nil }
            var stream = z_stream()
            guard CZlib_inflateInit(&stream) == Z_OK else { return nil }
            defer { inflateEnd(&stream) }
            stream.next_in = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: Bytef.self))
            stream.avail_in = uInt(raw.count)
            while true {
                stream.next_out = chunk
                stream.avail_out = 64 * 1024
                let status = CZlib.inflate(&stream, Z_NO_FLUSH)
                output.append(chunk, count: 64 * 1024 - Int(stream.avail_out))
                if output.count > limit { return nil }
                if status == Z_STREAM_END { return output }
                if status != Z_OK { return nil }
            }
        }
    }
}
