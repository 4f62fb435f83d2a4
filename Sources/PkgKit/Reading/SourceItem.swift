/// One entry of a package being read from, or built from, a folder on disk.
public struct SourceItem: Sendable {
    /// Where the bytes of a regular file come from.
    public enum Origin: Sendable {
        /// A file on disk (absolute path bytes).
        case file([UInt8])
        /// Bytes made in memory (a synthesised ContentInfo.plist).
        case data([UInt8])
        /// Nothing to read: folders and links.
        case none
    }

    /// The path inside the package.
    public var path: ArchivePath
    /// What the entry is.
    public var kind: EntryKind
    /// Permission bits as found on disk.
    public var mode: UInt32
    /// Byte count from `lstat` (files only), or of the in-memory data.
    public var size: Int64
    /// A symbolic link's target.
    public var linkTarget: [UInt8]?
    /// Where the data is.
    public var origin: Origin

    public init(path: ArchivePath, kind: EntryKind, mode: UInt32, size: Int64, linkTarget: [UInt8]? = nil, origin: Origin) {
        self.path = path
        self.kind = kind
        self.mode = mode
        self.size = size
        self.linkTarget = linkTarget
        self.origin = origin
    }
}
