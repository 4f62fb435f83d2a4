import Foundation
import PkgKitSupport
import PkgKitFormat
import PkgKitChecking

/// The options of one install (the flags of `pkgtool extract`).
public struct InstallOptions: Sendable {
    /// `--product-id`: the IAPProductIdentifier the package must have.
    public var expectedProductIdentifier: String?
    /// The ContentVersion the package must have (a sync checks it against its catalog entry).
    public var expectedContentVersion: String?
    /// The size limits (`--max-size`).
    public var limits: PackageLimits
    /// `--keep N`: afterwards keep the current version plus the newest N − 1 others. nil keeps all.
    public var keep: Int?
    /// `--allow-downgrade`: install a version lower than the current one.
    public var allowDowngrade: Bool
    /// `--force`: replace an installed folder of the same version whose files differ.
    public var force: Bool
    /// Called as the package is read and written, with bytes of input done and its total.
    public var progress: (@Sendable (Int64, Int64) -> Void)?
    /// Told how many files of the new version have been staged, as they are.
    public var filesStaged: (@Sendable (Int) -> Void)?
    /// Set to stop the install: the staging folder is removed and `OperationCancelled` thrown.
    public var cancellation: Cancellation?
    /// Keeps each version installed out of the device's backups (the default): on Apple
    /// platforms its folder is marked `isExcludedFromBackup`, as Apple's data storage guidelines
    /// ask of content that can be downloaded again. False leaves new versions in backups.
    /// Elsewhere it changes nothing.
    public var excludeFromBackup = true
    /// Who marks what is excluded from backups: the platform, or a test.
    package var backupExclusion: BackupExclusion = .platform
    /// Called once the version is staged and judged, right before it goes into place; what it
    /// throws stops the install with the staging folder removed (a sync waits here for its
    /// download to end and its sha256 to match).
    package var beforeCommit: (@Sendable () throws -> Void)?
    /// Called once the version is in place and pruned, before its files are recorded in the stat
    /// cache: whatever still holds links to them (a delta's rebuilt files) goes first, since
    /// removing a link changes a file's change time.
    package var afterCommit: (@Sendable () -> Void)?
    /// Where the expected identifier and version come from (a sync's catalog, or flags).
    package var expectationsFrom: RuleContext.ExpectationSource = .flags
    /// Files of the package on hand in the product folder, by their path in the package: the
    /// source's reader withholds their data (a delta's sparse copy never held it), and they are
    /// linked or copied from there instead.
    package var reused: [ArchivePath: InstalledFile] = [:]
    /// What the files in `reused` carry into the new version's chunk index beyond its package's
    /// chunk tables (a delta's previous version was indexed).
    package var carriedChunks: ChunkIndex.Carried?
    /// Judge the rules once, on the full pass, with no first look: for a delta sync, whose header
    /// and TOC are its catalog entry's and which has only its fetched ranges left to read. The
    /// expected identifier and version must be given.
    package var judgesOnce = false
    /// The time (nanoseconds since 1970) the stat cache is written at; the clock's when nil. A
    /// test sets a later one to see every entry in, none left out as too recent.
    package var statCacheTime: (@Sendable () -> Int64)?
    /// Where the room on the disk is asked before the version is unpacked: the system's own
    /// figure, or a test's. nil makes no check: a sync has made its own, download included.
    package var freeSpace: FreeSpace? = .system

    /// Options with every flag off, unless given.
    public init(expectedProductIdentifier: String? = nil, expectedContentVersion: String? = nil,
                limits: PackageLimits = PackageLimits(), keep: Int? = nil, allowDowngrade: Bool = false, force: Bool = false,
                progress: (@Sendable (Int64, Int64) -> Void)? = nil, cancellation: Cancellation? = nil) {
        self.expectedProductIdentifier = expectedProductIdentifier
        self.expectedContentVersion = expectedContentVersion
        self.limits = limits
        self.keep = keep
        self.allowDowngrade = allowDowngrade
        self.force = force
        self.progress = progress
        self.cancellation = cancellation
    }
}
