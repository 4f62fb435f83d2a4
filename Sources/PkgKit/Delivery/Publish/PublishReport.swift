import PkgKitDiagnostics
import PkgKitFormat

/// What `publish` did as a whole.
public enum PublishStatus: String, Sendable, Codable {
    /// Packages were copied, or the catalog or its signature was rewritten.
    case published
    /// Everything given was already published with the same bytes: nothing was written.
    case unchanged
    /// A package is invalid or breaks immutability, or the folder's catalog or signature forbids
    /// the change: nothing in the folder changed.
    case refused
    /// An input could not be read, or the folder could not be written.
    case failed
}

extension PublishStatus: RefusedOrFailed, OutcomeReporting {
    /// Published or unchanged is a success.
    public var outcome: Outcome {
        switch self {
        case .published, .unchanged: return .success
        case .refused: return .refused
        case .failed: return .failed
        }
    }
}

/// What `publish` did with one package.
public enum PublishedPackageStatus: String, Sendable, Codable {
    /// Copied into the folder and added to the catalog.
    case published
    /// Already published with the same bytes.
    case unchanged
    /// Invalid, or breaks immutability: see its diagnostics.
    case refused
    /// Valid, but nothing was published because another package was refused or failed.
    case skipped
    /// The package could not be read.
    case failed
}

/// One package in `publish`'s report.
public struct PublishedPackage: Sendable, Encodable {
    /// The path given.
    public var path: String
    /// What happened to it.
    public var status: PublishedPackageStatus
    /// Its IAPProductIdentifier, when readable.
    @Nullable public var productIdentifier: String? = nil
    /// Its ContentVersion, when readable.
    @Nullable public var contentVersion: String? = nil
    /// Its container, when readable: only a xar can be read in part by a device.
    @Nullable public var format: PackageFormat? = nil
    /// Its catalog `url` (relative to the catalog), when it is (or would be) published.
    @Nullable public var url: String? = nil
    /// Where it is in the published folder: `DIR/<id>/<version>.pkg`.
    @Nullable public var publishedPath: String? = nil
    /// The package's size in bytes.
    @Nullable public var size: Int64? = nil
    /// sha256 of the package.
    @Nullable public var sha256: String? = nil
    /// sha256 of a xar package's header and TOC; nil for other containers.
    @Nullable public var tocSHA256: String? = nil
    /// Regular files under `Contents/`.
    @Nullable public var fileCount: Int? = nil
    /// Sum of their sizes.
    @Nullable public var payloadBytes: Int64? = nil
    /// Findings about this package (rule diagnostics, refusals).
    public var diagnostics: [Diagnostic]
}

/// A version `--keep` removed: its catalog entry, and its file when it was in the folder.
public struct RemovedVersion: Sendable, Encodable, Equatable {
    /// The product.
    public var productIdentifier: String
    /// The version removed.
    public var contentVersion: String
    /// The file deleted, or nil when the entry pointed elsewhere (an absolute URL).
    @Nullable public var path: String?
}

/// `pkgtool publish --json`: `{"status", "destination", "catalog", "signature", "packages",
/// "removed", "diagnostics"}`.
public struct PublishReport: Sendable, Encodable {
    /// What happened as a whole.
    public var status: PublishStatus
    /// The published folder (`--to`).
    public var destination: String
    /// `DIR/catalog.json`.
    public var catalog: String
    /// The signature file of the folder's catalog after the run, `DIR/signatures/<sha256>.sig`
    /// (or, in a folder last signed by an older pkgtool, `DIR/catalog.json.sig`); nil when the
    /// catalog is not signed.
    @Nullable public var signature: String?
    /// Every package given, in order.
    public var packages: [PublishedPackage]
    /// Versions removed by `--keep`.
    public var removed: [RemovedVersion]
    /// Findings about the folder itself (its catalog, its signature) or the key.
    public var diagnostics: [Diagnostic]
}

extension PublishReport: OutcomeReporting {
    public var outcome: Outcome { status.outcome }

    /// The report of a publish that could not start (an unreadable key): every package listed,
    /// none published, refused or failed as `error` is, with its diagnostic.
    public static func stopped(destination: String, packages: [String], by error: any DiagnosableError) -> PublishReport {
        let publisher = Publisher(destination: destination)
        return PublishReport(status: PublishStatus(error), destination: publisher.destination, catalog: publisher.catalogPath, signature: nil,
                             packages: packages.map { PublishedPackage(path: $0, status: .skipped, diagnostics: []) },
                             removed: [], diagnostics: [error.diagnostic])
    }
}
