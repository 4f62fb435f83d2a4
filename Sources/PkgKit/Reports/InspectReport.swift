import Foundation
import PkgKitDiagnostics
import PkgKitFormat

/// `inspect`'s report (docs/json.md).
public struct InspectReport: Sendable, Codable, OutcomeReporting {
    /// One entry in `--files`.
    public struct File: Sendable, Codable {
        public var path: String
        public var type: EntryKind
        public var size: Int64
        @Nullable public var storedSize: Int64?
        @Nullable public var sha1: String?

        package init(path: String, type: EntryKind, size: Int64, storedSize: Int64? = nil, sha1: String? = nil) {
            self.path = path
            self.type = type
            self.size = size
            self.storedSize = storedSize
            self.sha1 = sha1
        }
    }

    public var path: String
    @Nullable public var format: PackageFormat?
    /// The one folder the package comes wrapped in (docs/format.md), nil when it has none.
    @Nullable public var wrapper: String? = nil
    @Nullable public var productIdentifier: String?
    @Nullable public var contentVersion: String?
    /// `zlib`, `stored`, `mixed` (xar); the container's filter otherwise.
    @Nullable public var compression: String?
    /// The checksum style (`sha1` for pkgtool's xar; `crc32` for zip).
    @Nullable public var checksum: String?
    public var fileCount: Int
    public var payloadBytes: Int64
    @Nullable public var archiveBytes: Int64?
    /// Every entry, with `--files`.
    @Nullable public var files: [File]? = nil
    /// Why the container could not be read whole (`unreadable-archive`, `checksum-mismatch`), or
    /// is no package (`missing-content-info`, as `validate` says it): any error here makes
    /// `inspect` exit 1.
    public var diagnostics: [Diagnostic] = []

    package init(path: String, format: PackageFormat?, productIdentifier: String?, contentVersion: String?, compression: String?,
         checksum: String?, fileCount: Int, payloadBytes: Int64, archiveBytes: Int64?) {
        self.path = path
        self.format = format
        self.productIdentifier = productIdentifier
        self.contentVersion = contentVersion
        self.compression = compression
        self.checksum = checksum
        self.fileCount = fileCount
        self.payloadBytes = payloadBytes
        self.archiveBytes = archiveBytes
    }

    /// The report for a path that could not be read at all.
    public init(path: String, diagnostics: [Diagnostic]) {
        self.init(path: path, format: nil, productIdentifier: nil, contentVersion: nil, compression: nil, checksum: nil,
                  fileCount: 0, payloadBytes: 0, archiveBytes: nil)
        self.diagnostics = diagnostics
    }

    /// True when the container was read whole and is a package.
    public var isWhole: Bool { !diagnostics.failing() }

    /// A success when read whole; failed when it could not be read at all.
    public var outcome: Outcome { Outcome(passed: isWhole, diagnostics) }
}
