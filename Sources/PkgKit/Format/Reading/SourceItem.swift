
/// One entry of a package being read from, or built from, a folder on disk.
public struct SourceItem: Sendable {
    /// Where the bytes of a regular file come from.
    public enum Origin: Sendable {
        /// A file on disk (absolute path bytes).
        case file([UInt8])
        /// A file found by `FolderWalker`: on disk at the walked folder's root followed by the
        /// item's package path less the walk's prefix. One shared root instead of a path per
        /// file, which would be held through a whole create. The disk path follows
        /// `path`: an item moved to another package path needs a `.file` origin instead.
        case walked(WalkedFolder)
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

    /// The absolute path of the file on disk, for `.file` and `.walked` origins.
    public var sourcePath: [UInt8]? {
        switch origin {
        case .file(let absolute): return absolute
        case .walked(let folder): return folder.root + [UInt8(ascii: "/")] + path.bytes.dropFirst(folder.prefixLength)
        case .data, .none: return nil
        }
    }
}

/// The folder a `FolderWalker` walk started from, shared by every file it found.
public final class WalkedFolder: Sendable {
    /// The folder's absolute path.
    public let root: [UInt8]
    /// How many leading bytes of a package path are the walk's prefix and its `/`, not on disk.
    public let prefixLength: Int

    /// A walk of `root` whose package paths start with `prefix` (empty for none).
    public init(root: [UInt8], prefix: [UInt8]) {
        self.root = root
        prefixLength = prefix.isEmpty ? 0 : prefix.count + 1
    }
}
