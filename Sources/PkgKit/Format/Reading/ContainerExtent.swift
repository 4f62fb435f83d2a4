import Foundation
import PkgKitSupport

/// Whether a container's bytes are all there, judged from its own structure without reading
/// the data: the check behind `inspect`'s "the container is whole" and a zip's central directory.
public enum ContainerExtent {
    /// How far a xar's table of contents says its heap reaches, gathered entry by entry.
    public struct XarHeap: Sendable {
        /// The end of the furthest data the TOC names, from the heap's start.
        public private(set) var end: Int64 = 0

        public init() {}

        /// Counts `entry`'s data.
        public mutating func include(_ entry: XarTableOfContents.Entry) {
            guard let offset = entry.offset, let length = entry.length, offset >= 0, length >= 0 else { return }
            let (sum, overflow) = offset.addingReportingOverflow(length)
            end = max(end, overflow ? .max : sum)
        }

        /// Why a xar of `fileSize` bytes with `toc` is not whole, or nil when every byte the TOC
        /// names (its own checksum included) lies in the file.
        public func problem(toc: XarTableOfContents, fileSize: Int64) -> String? {
            var needed = end
            if let offset = toc.checksumOffset, let size = toc.checksumSize, offset >= 0, size >= 0 {
                let (sum, overflow) = offset.addingReportingOverflow(size)
                needed = max(needed, overflow ? .max : sum)
            }
            let available = fileSize - toc.heapStart
            guard needed > available else { return nil }
            if available < 0 { return "the package is truncated: it ends inside its table of contents" }
            return "the package is truncated: its heap is \(available) bytes but the table of contents declares \(needed)"
        }
    }

    /// Why the xar at `path` is not whole, or nil when it is (or its TOC cannot be read: the
    /// readers report that themselves).
    public static func xarProblem(_ path: String) -> String? {
        guard let file = try? PackageFile(path: path) else { return nil }
        return xarProblem(file)
    }

    /// Why the xar in `bytes` is not whole (judged by its final size), or nil when it is (or its
    /// TOC cannot be read).
    public static func xarProblem(_ bytes: PackageBytes) -> String? {
        var heap = XarHeap()
        guard let toc = try? XarTableOfContents.read(bytes, keepEntries: false, visit: { heap.include($0) }) else { return nil }
        return heap.problem(toc: toc, fileSize: bytes.size)
    }

    /// Why the zip at `path` is not whole: nil when its end of central directory record is there.
    /// libarchive reads a zip from its local headers when the central directory is missing, so
    /// a zip cut short there would otherwise read as whole.
    public static func zipProblem(_ path: String) -> String? {
        guard let size = fileSize(path) else { return nil }
        // The end record is 22 bytes plus a comment of at most 65,535.
        let tailLength = Int(min(size, 22 + 65_535))
        let fd = openReadOnly(path)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var tail = [UInt8](repeating: 0, count: tailLength)
        let count = tail.withUnsafeMutableBytes { readFully(fd, $0, at: size - Int64(tailLength)) }
        guard count == tailLength else { return nil }
        let signature: [UInt8] = [0x50, 0x4B, 0x05, 0x06]
        var index = tailLength - 22
        while index >= 0 {
            if tail[index] == signature[0] && Array(tail[index..<(index + 4)]) == signature { return nil }
            index -= 1
        }
        return "the zip has no central directory: it is truncated or corrupt; make it again"
    }

    private static func fileSize(_ path: String) -> Int64? {
        var info = stat()
        return stat(path, &info) == 0 ? Int64(info.st_size) : nil
    }
}
