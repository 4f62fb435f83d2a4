
/// A xar table of contents as data: every `<file>` with the facts libarchive does not expose
/// (stored length, heap offset, encoding, checksums). Read with libxml2's streaming parser
/// straight from the inflating TOC, so the XML is never held whole.
public struct XarTableOfContents: Sendable {
    /// One `<file>` element.
    public struct Entry: Sendable {
        /// Position in document order (folders before their contents).
        public var order = 0
        /// The full path's bytes, components joined with `/`.
        public var pathBytes: [UInt8] = []
        /// The `<name>` alone.
        public var name: [UInt8] = []
        /// The `order` of the enclosing `<file>`, or -1 at the top.
        public var parent = -1
        /// The full path as text.
        public var path: String { String(decoding: pathBytes, as: UTF8.self) }
        /// The xar type (`file`, `directory`, `symlink`, …).
        public var type = ""
        /// `<mode>`: permission bits, read as octal.
        public var mode: UInt32?
        /// `<link>`: a symbolic link's target.
        public var linkTarget: [UInt8]?
        /// `<data><size>`: bytes once unpacked.
        public var size: Int64?
        /// `<data><length>`: bytes stored in the heap.
        public var length: Int64?
        /// `<data><offset>`: where the stored bytes start, from the heap's start.
        public var offset: Int64?
        /// `<encoding style>`.
        public var encoding: String?
        /// `<archived-checksum>`'s style and hex digest (of the stored bytes).
        public var archivedStyle: String?
        public var archivedChecksum: String?
        /// `<extracted-checksum>`'s style and hex digest (of the unpacked bytes).
        public var extractedStyle: String?
        public var extractedChecksum: String?
        /// `<chunks>`: how a large file is cut into chunks, when the TOC says and the
        /// table fits the file exactly (see `ChunkTable`).
        public var chunks: ChunkTable?

        package init(order: Int = 0, pathBytes: [UInt8] = [], name: [UInt8] = [], parent: Int = -1, type: String = "", mode: UInt32? = nil, linkTarget: [UInt8]? = nil, size: Int64? = nil, length: Int64? = nil, offset: Int64? = nil, encoding: String? = nil, archivedStyle: String? = nil, archivedChecksum: String? = nil, extractedStyle: String? = nil, extractedChecksum: String? = nil, chunks: ChunkTable? = nil) {
            self.order = order
            self.pathBytes = pathBytes
            self.name = name
            self.parent = parent
            self.type = type
            self.mode = mode
            self.linkTarget = linkTarget
            self.size = size
            self.length = length
            self.offset = offset
            self.encoding = encoding
            self.archivedStyle = archivedStyle
            self.archivedChecksum = archivedChecksum
            self.extractedStyle = extractedStyle
            self.extractedChecksum = extractedChecksum
            self.chunks = chunks
        }
    }

    /// The TOC checksum style (`sha1`, `md5`, …).
    public var checksumStyle: String?
    /// Where the TOC's own checksum lies in the heap, and its length.
    public var checksumOffset: Int64?
    public var checksumSize: Int64?
    /// The header's checksum algorithm number (0 none, 1 sha1, 2 md5, 3 named in the header).
    public var headerChecksumAlgorithm: UInt32 = 0
    /// The compressed TOC's length, as the header gives it.
    public var compressedLength: Int64 = 0
    /// Where the heap starts in the file: every data offset counts from here.
    public var heapStart: Int64 = 0
    /// Every `<file>`, parents before their children, in document order.
    public var entries: [Entry] = []

    /// The most TOC XML read, whatever the header claims.
    static let maxTOCBytes: Int64 = 512 << 20
    /// The most `<file>` elements accepted.
    package static let maxEntries = 1_000_000
    /// The longest path kept: longer ones are cut here and refused by every reader.
    package static let maxPathBytes = 4 * PackageLimits.maxPathBytes + 1
    /// The deepest element nesting accepted.
    static let maxDepth = 600
    /// The most chunks all chunk tables together may declare; past it, tables are ignored.
    package static let maxChunks = 1 << 20

    /// The entry at `path`, if any.
    public func entry(_ path: String) -> Entry? { entries.first { $0.pathBytes.elementsEqual(path.utf8) } }

    /// Reads the TOC of the xar file at `path`; see `read(_:keepEntries:visit:)`.
    public static func read(_ path: String, keepEntries: Bool = true, visit: ((Entry) -> Void)? = nil) throws(XarTOCError) -> XarTableOfContents {
        let file: PackageFile
        do {
            file = try PackageFile(path: path)
        } catch {
            throw XarTOCError.unreadable(error.message)
        }
        return try read(file, keepEntries: keepEntries, visit: visit)
    }

    /// Reads the TOC of the xar in `bytes`. Each `<file>` is handed to `visit` when it closes
    /// (children before their folder); with `keepEntries: false` none is kept, so memory does not
    /// grow with the package. Throws what kept the TOC from being read: the bytes could not be,
    /// they are no xar TOC, or the TOC passes a limit.
    public static func read(_ bytes: PackageBytes, keepEntries: Bool = true, visit: ((Entry) -> Void)? = nil) throws(XarTOCError) -> XarTableOfContents {
        let header = try XarHeader.read(from: bytes)
        var toc = XarTableOfContents()
        toc.heapStart = header.heapStart
        toc.compressedLength = header.tocLength
        toc.headerChecksumAlgorithm = header.checksumAlgorithm
        let inflater = XarTOCInflater(bytes: bytes, maxBytes: maxTOCBytes)
        inflater.start()
        defer { inflater.stop() }
        return try XarTOCParser.parse(inflater, into: toc, keepEntries: keepEntries, visit: visit)
    }
}
