
/// The fixed header at the start of a xar in the standard layout: 28 bytes, big-endian, `xar!`
/// first. A longer header would move the TOC, and pkgtool reads only this layout (docs/format.md).
/// The one parser of it: the reader, the opener's diagnostics, the catalog's digests and every
/// client that reads part of a package take the header, and the bytes a catalog's `tocSHA256`
/// anchors, from here.
package struct XarHeader: Equatable, Sendable {
    /// The header's bytes, and where the compressed TOC starts.
    package static let size = 28
    /// The first four bytes of every xar.
    package static let magic: [UInt8] = Array("xar!".utf8)

    /// The compressed TOC's length.
    package var tocLength: Int64
    /// The TOC's length once inflated, as the header declares it (readers go by the stream).
    var tocUncompressedLength: Int64
    /// The checksum algorithm number (0 none, 1 sha1, 2 md5, 3 named in the header).
    var checksumAlgorithm: UInt32

    /// Where the heap starts: every data offset in the TOC counts from here.
    package var heapStart: Int64 { Int64(Self.size) + tocLength }

    /// What a catalog's `tocSHA256` covers: bytes `0 ..< header size + compressed TOC length`,
    /// the header and the compressed TOC (which holds every file's checksums and chunk tables).
    package var anchoredBytes: Range<Int64> { 0 ..< heapStart }

    /// The header in `bytes` (its first 28), or nil when they are no xar header in the standard
    /// layout within pkgtool's bounds (see `parse`).
    package init?(_ bytes: some Collection<UInt8>) {
        guard let parsed = try? Self.parse(bytes) else { return nil }
        self = parsed
    }

    /// The header in the first 28 of `bytes`. Refused: fewer bytes, another magic, header size or
    /// layout, and a TOC declared longer than any pkgtool reads (`XarTableOfContents.maxTOCBytes`,
    /// compressed or not), before anything is allocated for it.
    package static func parse(_ bytes: some Collection<UInt8>) throws(XarTOCError) -> XarHeader {
        let head = Array(bytes.prefix(size))
        guard head.count == size else { throw .malformed("the file is shorter than a xar header") }
        guard head.starts(with: magic), head[4] == 0, head[5] == UInt8(size) else {
            throw .malformed("the header is not a xar header in the standard layout")
        }
        let compressed = head[8..<16].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let uncompressed = head[16..<24].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        // A hostile header can claim any length: nothing larger than the most TOC read is taken.
        let bound = UInt64(XarTableOfContents.maxTOCBytes)
        guard compressed <= bound, uncompressed <= bound else { throw .limitPassed(.declaredLength(max(compressed, uncompressed))) }
        return XarHeader(tocLength: Int64(compressed), tocUncompressedLength: Int64(uncompressed),
                         checksumAlgorithm: head[24..<28].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
    }

    private init(tocLength: Int64, tocUncompressedLength: Int64, checksumAlgorithm: UInt32) {
        (self.tocLength, self.tocUncompressedLength, self.checksumAlgorithm) = (tocLength, tocUncompressedLength, checksumAlgorithm)
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
        return try parse(header[0..<count])
    }
}
