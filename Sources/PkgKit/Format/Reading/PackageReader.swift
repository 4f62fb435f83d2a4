import PkgKitDiagnostics

/// One entry as a reader reports it, before any rule has looked at it.
public struct ArchiveEntry: Sendable {
    /// The normalised path.
    public var path: ArchivePath
    /// What the entry is.
    public var kind: EntryKind
    /// Permission bits (file-type bits removed).
    public var mode: UInt32
    /// The size the container declares for the data, if any. Never trusted alone.
    public var declaredSize: Int64?
    /// A symbolic link's target, as stored.
    public var linkTarget: [UInt8]?
    /// A hard link's target path.
    public var hardlinkTarget: ArchivePath?
    /// True for a file whose data the reader was asked not to deliver (`XarReader`'s `dataWanted`):
    /// it delivers none, and whoever asked supplies the file's bytes and facts itself.
    package var dataWithheld = false
    /// A file's chunk table, as the container's verified TOC gives it (a xar's `<chunks>`).
    package var chunks: ChunkTable?

    public init(path: ArchivePath, kind: EntryKind, mode: UInt32, declaredSize: Int64? = nil,
                linkTarget: [UInt8]? = nil, hardlinkTarget: ArchivePath? = nil) {
        self.path = path
        self.kind = kind
        self.mode = mode
        self.declaredSize = declaredSize
        self.linkTarget = linkTarget
        self.hardlinkTarget = hardlinkTarget
    }
}

/// The container a package came in.
public enum PackageFormat: String, Codable, Sendable {
    case xar
    case zip
    case tar
    case folder
    /// A `productbuild`/`pkgbuild` flat installer package: xar around a gzip'd cpio Payload.
    case flatPackage = "flat-package"
}

/// A streaming reader over one package, in any container.
///
/// Call `nextEntry()` until it returns nil; between calls, `readData(into:)` streams the
/// current entry's bytes. Data not read is skipped. Implementations never hold a whole file.
public protocol PackageReader: AnyObject {
    /// The container being read.
    var format: PackageFormat { get }
    /// The next entry, or nil at the end.
    func nextEntry() throws -> ArchiveEntry?
    /// Copies up to `buffer.count` bytes of the current entry's data; 0 means its end.
    func readData(into buffer: UnsafeMutableRawBufferPointer) throws -> Int
    /// How far reading has got, in bytes of the input, and the input's total (for progress).
    var progress: (done: Int64, total: Int64) { get }
    /// The sha1 (lowercase hex) the container gives for the current file's data, when the reader
    /// checks the data against it: once every byte has been read without a checksum error, it
    /// is the data's sha1 and need not be computed again.
    var declaredSHA1: String? { get }
    /// How many entries the package holds, when the reader knows before reading them (a xar's
    /// TOC): the scanner sizes its tables once instead of growing them.
    var expectedEntryCount: Int? { get }
}

extension PackageReader {
    /// Readers that cannot tell how far they are report nothing.
    public var progress: (done: Int64, total: Int64) { (0, 0) }
    /// Readers that do not check sha1 digests themselves give none.
    public var declaredSHA1: String? { nil }
    /// Most readers learn the count only by reading.
    public var expectedEntryCount: Int? { nil }
}

/// Why reading failed: the input could not be read (a failure), or the package breaks off in a
/// way its reader reports (a refusal, with the rule's code).
public enum ReadError: DiagnosableError, Sendable, Equatable {
    /// Not an archive of a known format, truncated or corrupt (`unreadable-archive`).
    case unreadable(path: String?, String)
    /// A table-of-contents or file checksum did not match (`checksum-mismatch`).
    case checksumMismatch(path: String?, String)
    /// One entry holds the data of the same path more than once (`duplicate-entry`): what
    /// libarchive's own xar writer makes of a path given twice.
    case duplicateEntry(path: String?, String)
    /// The input is missing or the system refused to read it (exit 2).
    case io(path: String, String)
}

extension ReadError: CustomStringConvertible {
    /// The diagnostic code this failure is reported with: `unreadable-input` for the system
    /// refusing to read (exit 2), else what is wrong with the package.
    public var code: DiagnosticCode {
        switch self {
        case .io: return .unreadableInput
        case .unreadable: return .unreadableArchive
        case .checksumMismatch: return .checksumMismatch
        case .duplicateEntry: return .duplicateEntry
        }
    }

    /// A failure when the system refused to read the input; a refusal when the package itself
    /// is damaged.
    public var disposition: ErrorDisposition { code.disposition }

    /// The failure as a diagnostic on the path concerned.
    public var diagnostic: Diagnostic {
        switch self {
        case .io(let path, let message): return Diagnostic(code, path: path, message)
        case .unreadable(let path, let message), .checksumMismatch(let path, let message), .duplicateEntry(let path, let message):
            return Diagnostic(code, path: path, message)
        }
    }

    /// The failure in one line, led by its path when it has one.
    public var description: String {
        switch self {
        case .io(let path, let message): return "\(path): \(message)"
        case .unreadable(let path, let message), .checksumMismatch(let path, let message), .duplicateEntry(let path, let message):
            return path.map { "\($0): \(message)" } ?? message
        }
    }
}
