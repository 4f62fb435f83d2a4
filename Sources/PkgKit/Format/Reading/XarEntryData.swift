import Foundation

/// Reads one small member of a xar straight from its heap, for `inspect`, which describes a
/// package from its TOC without streaming every member through libarchive.
package enum XarEntryData {
    /// The unpacked bytes of `entry` (zlib or stored) in the xar file at `path`, or nil when they
    /// cannot be had within `limit`.
    package static func read(_ entry: XarTableOfContents.Entry, from path: String, heapStart: Int64, limit: Int) -> Data? {
        guard let file = try? PackageFile(path: path) else { return nil }
        return read(entry, from: file, heapStart: heapStart, limit: limit)
    }

    /// The unpacked bytes of `entry` (zlib or stored) in the xar in `bytes`, or nil when they
    /// cannot be had within `limit`.
    package static func read(_ entry: XarTableOfContents.Entry, from bytes: PackageBytes, heapStart: Int64, limit: Int) -> Data? {
        guard let length = entry.length, let offset = entry.offset else { return Data() }
        // Offsets come from the archive: add them without overflow before reading.
        let (start, overflow) = heapStart.addingReportingOverflow(offset)
        guard length >= 0, length <= Int64(limit), offset >= 0, !overflow, start >= 0 else { return nil }
        var stored = Data(count: Int(length))
        let count = stored.withUnsafeMutableBytes { try? bytes.readChecked(into: $0, at: start) }
        guard count == Int(length) else { return nil }
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
