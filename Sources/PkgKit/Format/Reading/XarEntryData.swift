import Foundation

/// Reads one small member of a xar straight from its heap, for `inspect`, which describes a
/// package from its TOC without streaming every member through libarchive.
enum XarEntryData {
    /// The unpacked bytes of `entry` (zlib or stored), or nil when they cannot be had within `limit`.
    static func read(_ entry: XarTableOfContents.Entry, from path: String, heapStart: Int64, limit: Int) -> Data? {
        guard let length = entry.length, let offset = entry.offset else { return Data() }
        // Offsets come from the archive: add them without overflow before seeking.
        let (start, overflow) = heapStart.addingReportingOverflow(offset)
        guard length >= 0, length <= Int64(limit), offset >= 0, !overflow, start >= 0,
              let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard (try? handle.seek(toOffset: UInt64(start))) != nil,
              let stored = try? handle.read(upToCount: Int(length)), stored.count == Int(length) else { return nil }
        switch entry.encoding ?? "application/octet-stream" {
        case "application/octet-stream":
            return stored
        case "application/x-gzip":
            return ZlibStream.inflateFirst(stored, keepOutput: true, limit: limit)?.output
        default:
            return nil
        }
    }
}
