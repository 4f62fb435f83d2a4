import PkgKitDiagnostics
import PkgKitFormat
import PkgKitChecking

/// What `Installer.install` did.
public enum InstallStatus: String, Sendable, Codable {
    /// A version folder was written (or the record now points at an identical one).
    case installed
    /// The same version with the same files was already current: nothing was written.
    case unchanged
    /// The package is invalid, or the install was refused (see the diagnostics).
    case refused
}

extension InstallStatus: OutcomeReporting {
    /// Installed or unchanged is a success.
    public var outcome: Outcome { self == .refused ? .refused : .success }
}

/// The result of one install: `pkgtool extract --json` (docs/json.md).
public struct InstallReport: Sendable, Encodable {
    public var status: InstallStatus
    @Nullable public var productIdentifier: String?
    @Nullable public var contentVersion: String?
    /// The version the record named before this run, if any.
    @Nullable public var previousVersion: String?
    /// `DIR/<id>/<version>` when installed or unchanged.
    @Nullable public var installedPath: String?
    public var fileCount: Int
    public var payloadBytes: Int64
    /// Version folders removed by `--keep`.
    public var removedVersions: [String]
    public var diagnostics: [Diagnostic]

    /// A `refused` report on a package not read yet, expected to be `info`, to be filled in as
    /// the install goes on.
    package init(expecting info: ContentInfo) {
        status = .refused
        productIdentifier = info.productIdentifier
        contentVersion = info.contentVersion
        previousVersion = nil
        installedPath = nil
        fileCount = 0
        payloadBytes = 0
        removedVersions = []
        diagnostics = []
    }

    /// A `refused` report on a checked package, to be filled in as the install goes on.
    package init(_ check: PackageCheck, previousVersion: String? = nil) {
        status = .refused
        productIdentifier = check.contentInfo?.productIdentifier
        contentVersion = check.contentInfo?.contentVersion
        self.previousVersion = previousVersion
        installedPath = nil
        fileCount = check.facts.fileCount
        payloadBytes = check.facts.payloadBytes
        removedVersions = []
        diagnostics = check.diagnostics
    }
}

extension InstallReport: OutcomeReporting {
    public var outcome: Outcome { status.outcome }
}
