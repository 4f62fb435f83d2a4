
/// The fixed header at the start of a xar in the standard layout: 28 bytes, big-endian, `xar!`
/// first. A longer header would move the TOC, and pkgtool reads only this layout (docs/format.md).
package struct XarHeader: Equatable, Sendable {
    /// The header's bytes, and where the compressed TOC starts.
    package static let size = 28

    /// The compressed TOC's length.
    package var tocLength: Int64
    /// The checksum algorithm number (0 none, 1 sha1, 2 md5, 3 named in the header).
    package var checksumAlgorithm: UInt32

    /// Where the heap starts: every data offset in the TOC counts from here.
    package var heapStart: Int64 { Int64(Self.size) + tocLength }

    /// The header in `bytes`, or nil when they are no xar header in the standard layout.
    package init?(_ bytes: [UInt8]) {
        guard bytes.count == Self.size, bytes.starts(with: "xar!".utf8), bytes[4] == 0, bytes[5] == UInt8(Self.size) else { return nil }
        let tocLength = bytes[8..<16].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        // A hostile header can claim any length: keep the heap start a sane, positive number.
        guard tocLength <= UInt64(Int64.max - Int64(Self.size)) else { return nil }
        self.tocLength = Int64(tocLength)
        checksumAlgorithm = bytes[24..<28].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    }

    /// The header at the start of `bytes`.
    package static func read(from bytes: PackageBytes) throws(XarTOCError) -> XarHeader {
        var header = [UInt8](repeating: 0, count: size)
        let count: Int
        do {
            count = try header.withUnsafeMutableBytes { try bytes.readChecked(into: $0, at: 0) }
        } catch {
            throw XarTOCError(sourceFailure: error)
        }
        guard let parsed = XarHeader(Array(header[0..<count])) else {
            throw XarTOCError.malformed(count < size ? "the file is shorter than a xar header" : "the header is not a xar header in the standard layout")
        }
        return parsed
    }
}
