import Foundation
import PkgKitDiagnostics

/// What the scanner learnt about one entry: everything a rule may ask, nothing of the data
/// beyond a digest, so that a package of any size fits in memory as facts.
public struct EntryFacts: Sendable {
    /// The normalised path.
    public var path: ArchivePath
    /// Why the stored path is unsafe (see `PathSafety`), or nil.
    public var pathProblem: String?
    /// What the entry is.
    public var kind: EntryKind
    /// Permission bits.
    public var mode: UInt32
    /// Bytes of data actually read (or, when only heads were read, the size on disk).
    public var size: Int64
    /// A symbolic link's target bytes.
    public var linkTarget: [UInt8]?
    /// A hard link's target path.
    public var hardlinkTarget: ArchivePath?
    /// Machine code or script found in the first bytes.
    public var executable: ExecutableFormat?
    /// Lowercase hex sha1 of the data, when it was read in full (or checked against the TOC's).
    public var sha1: String? {
        get { digest?.hexString }
        set { digest = newValue.flatMap(SHA1Value.init(hex:)) }
    }
    /// The same sha1 as it is kept: 20 bytes, not a string per file.
    package var digest: SHA1Value?

    package init(path: ArchivePath, pathProblem: String? = nil, kind: EntryKind, mode: UInt32, size: Int64, linkTarget: [UInt8]? = nil, hardlinkTarget: ArchivePath? = nil, executable: ExecutableFormat? = nil, digest: SHA1Value? = nil) {
        self.path = path
        self.pathProblem = pathProblem
        self.kind = kind
        self.mode = mode
        self.size = size
        self.linkTarget = linkTarget
        self.hardlinkTarget = hardlinkTarget
        self.executable = executable
        self.digest = digest
    }

    /// True for regular files (and hard-link originals carrying data) counted in the payload.
    public var isPayloadFile: Bool { kind == .file && path.isInsideContents }
}

/// Everything one pass over a package found, for the rules to judge.
public struct PackageFacts: Sendable {
    /// The container, when known.
    public var format: PackageFormat?
    /// The package file's name (for `bad-extension`), nil for folders.
    public var archiveName: String?
    /// The package file's size on disk.
    public var archiveBytes: Int64?
    /// The one folder the package comes wrapped in (docs/format.md), nil when it has none. Paths
    /// in `entries` are relative to the package root, inside the wrapper.
    public var wrapper: String?
    /// Every entry in the order read.
    public var entries: [EntryFacts] = []
    /// The bytes of the root ContentInfo.plist when present and not over the size bound.
    public var contentInfoData: Data? {
        // Parsed once here: every rule asks for the keys.
        didSet { parsedContentInfo = contentInfoData.map { ParsedContentInfo(data: $0) } }
    }
    /// The plist's keys, when one was found.
    public private(set) var parsedContentInfo: ParsedContentInfo?
    /// Set when ContentInfo.plist was larger than `PackageLimits.maxContentInfoBytes`.
    public var contentInfoTooLarge = false
    /// Reading stopped because the data passed the size limit.
    public var stoppedAtSizeLimit = false
    /// Reading broke off before the end: what was not read cannot be judged missing.
    public var stoppedEarly = false
    /// Failures met while reading: `unreadable-archive`, `checksum-mismatch`, `duplicate-entry`.
    public var readFailures: [Diagnostic] = []
    /// The chunk tables the container gives, each with the position in `entries` of its file:
    /// few, and only in packages made with chunks, so not a field of every entry.
    package var chunkTables: [(entry: Int, table: ChunkTable)] = []

    public init() {}

    /// Regular files under `Contents/`.
    public var fileCount: Int { entries.lazy.filter(\.isPayloadFile).count }
    /// Sum of the sizes of the regular files under `Contents/`.
    public var payloadBytes: Int64 { entries.lazy.filter(\.isPayloadFile).reduce(0) { $0 + $1.size } }

}
