import Foundation
import PkgKitDiagnostics
import PkgKitCatalog
import PkgKitTransport
import PkgKitInstall

/// What became of one product in a sync (or, for `check`, what would).
public enum SyncStatus: String, Sendable, Codable {
    /// The catalog's latest version was downloaded and installed.
    case installed
    /// Nothing to do: the installed version is the latest (or newer; sync never downgrades).
    case unchanged
    /// `check` only: a sync would download and install the catalog's latest version.
    case update
    /// Refused: a bad signature, a package that is not its catalog entry, a rule, an unknown
    /// product. Needs a person; nothing was installed.
    case refused
    /// Could not be done: the server could not be reached, HTTP 404, disk full. May pass by itself;
    /// nothing was installed, and a partial download is kept for the next run.
    case failed
}

extension SyncStatus: RefusedOrFailed {}

/// One product's outcome (`pkgtool sync --json`, docs/sync.md), or in a check what a sync would do
/// (`--check --json`: the fields a check fills in, see `SyncReport.mode`).
public struct ProductSyncResult: Sendable, Encodable, Equatable {
    /// The product.
    public var productIdentifier: String
    /// What became of it.
    public var status: SyncStatus
    /// The version installed before the sync, if any.
    @Nullable public var previousVersion: String? = nil
    /// The catalog's latest version (the one installed, when `installed`).
    @Nullable public var contentVersion: String? = nil
    /// True when the package was assembled from a partial download and installed files (check:
    /// when a sync would fetch a delta).
    public var delta: Bool
    /// Bytes of package data received for this product.
    public var bytesDownloaded: Int64
    /// Check only: what a sync would download, that is the header, TOC and the changed files'
    /// stored bytes for a delta, else the package size less what a `.part` of an earlier run
    /// holds; 0 when nothing would be, and in a sync.
    public var bytesToDownload: Int64
    /// On the delta path, how many files under `Contents/` were downloaded (the rest were reused).
    @Nullable public var filesDownloaded: Int? = nil
    /// Why the package was (check: would be) downloaded whole although a version was installed
    /// (`--no-delta`, `server ignores Range`, …); nil for a delta, or when nothing was installed before.
    @Nullable public var fullDownloadReason: SyncPlan.FullDownloadReason? = nil
    /// Bytes an earlier run had downloaded and this one continued from (check: that a sync would
    /// continue from); nil when it started afresh.
    @Nullable public var resumedFrom: Int64? = nil
    /// Where the current version is installed (`DIR/<id>/<version>`), when installed or unchanged.
    @Nullable public var installedPath: String? = nil
    /// The current version's folder (`installedPath` as a file URL).
    public var installedURL: URL? { installedPath.map { URL(fileURLWithPath: $0, isDirectory: true) } }
    /// Version folders removed by `--keep`.
    public var removedVersions: [String]
    /// False for a product installed from elsewhere that this catalog does not list (an update
    /// run leaves it as it is).
    public var listed: Bool
    /// Findings: why it was refused or failed, or warnings.
    public var diagnostics: [Diagnostic]
    /// The network failure that failed it, when one did (its diagnostic is in `diagnostics`):
    /// whether it may pass by itself, and a TLS failure's reason, for a front end's advice.
    /// Not in the JSON.
    @NotInJSON public var transportFailure: TransportError? = nil
    /// When there was no room on the disk for it (its diagnostic is in `diagnostics`): the
    /// bytes needed and free, for an app to say so in its own words. Not in the JSON.
    @NotInJSON public var insufficientSpace: InsufficientSpace? = nil

    /// A result with nothing done yet.
    public init(productIdentifier: String, status: SyncStatus = .unchanged, previousVersion: String? = nil,
                contentVersion: String? = nil, delta: Bool = false, bytesDownloaded: Int64 = 0,
                installedPath: String? = nil, diagnostics: [Diagnostic] = []) {
        self.productIdentifier = productIdentifier
        self.status = status
        self.previousVersion = previousVersion
        self.contentVersion = contentVersion
        self.delta = delta
        self.bytesDownloaded = bytesDownloaded
        bytesToDownload = 0
        self.installedPath = installedPath
        removedVersions = []
        listed = true
        self.diagnostics = diagnostics
    }

    /// A sync's JSON: everything but `bytesToDownload` (and the transport failure).
    private enum CodingKeys: String, CodingKey {
        case productIdentifier, status, previousVersion, contentVersion, delta, bytesDownloaded, filesDownloaded
        case fullDownloadReason, resumedFrom, installedPath, removedVersions, listed, diagnostics
    }

    /// A check's JSON: what a sync would do, without what only an install has.
    fileprivate struct Checked: Encodable {
        var productIdentifier: String
        var status: SyncStatus
        @Nullable var previousVersion: String?
        @Nullable var contentVersion: String?
        var delta: Bool
        var bytesToDownload: Int64
        @Nullable var fullDownloadReason: SyncPlan.FullDownloadReason?
        @Nullable var resumedFrom: Int64?
        var diagnostics: [Diagnostic]

        init(_ result: ProductSyncResult) {
            productIdentifier = result.productIdentifier
            status = result.status
            previousVersion = result.previousVersion
            contentVersion = result.contentVersion
            delta = result.delta
            bytesToDownload = result.bytesToDownload
            fullDownloadReason = result.fullDownloadReason
            resumedFrom = result.resumedFrom
            diagnostics = result.diagnostics
        }
    }
}

/// What a run of `SyncClient` does with each product's plan.
public enum SyncMode: String, Sendable {
    /// Carries it out: downloads and installs (`sync`).
    case install
    /// Stops before downloading any package and reports what a sync would do (`check`).
    case check
}

/// A whole sync's outcome (`pkgtool sync --json`), or a check's (`pkgtool sync --check --json`).
public struct SyncReport: Sendable, Encodable, Equatable, OutcomeReporting {
    /// One result per product, in the order they were synced (sorted by identifier).
    public var products: [ProductSyncResult]
    /// Every body byte received in the run: the catalog, its signature file and package data,
    /// whatever the outcome.
    public var bytesDownloaded: Int64
    /// What is known of the catalog's signature: `verified` with trusted keys; without them,
    /// `unchecked` when the catalog is signed, `absent` when it is not. nil when no catalog came.
    @Nullable public var signature: CatalogSignatureStatus? = nil
    /// Findings about the catalog itself (unreachable, invalid, badly signed) when no product
    /// carries them: each product affected has them in its own `diagnostics`, so that a
    /// report lists a failure once.
    public var diagnostics: [Diagnostic]
    /// The network failure that stopped the run before any product was looked at (the catalog
    /// could not be fetched), when one did. Not in the JSON.
    @NotInJSON public var transportFailure: TransportError? = nil
    /// A sync's report or a check's. A check's JSON gives each product's `bytesToDownload`, and
    /// leaves out the product fields only an install fills in (`installedPath`, `listed`, …).
    public var mode: SyncMode

    /// A report.
    public init(products: [ProductSyncResult] = [], bytesDownloaded: Int64 = 0, signature: CatalogSignatureStatus? = nil,
                diagnostics: [Diagnostic] = [], mode: SyncMode = .install) {
        self.products = products
        self.bytesDownloaded = bytesDownloaded
        self.signature = signature
        self.diagnostics = diagnostics
        self.mode = mode
    }

    private enum CodingKeys: String, CodingKey {
        case products, bytesDownloaded, signature, diagnostics
    }

    /// The JSON of `mode`: the report's fields are the same, its products' differ.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch mode {
        case .install: try container.encode(products, forKey: .products)
        case .check: try container.encode(products.map(ProductSyncResult.Checked.init), forKey: .products)
        }
        try container.encode(bytesDownloaded, forKey: .bytesDownloaded)
        try container.encode(_signature, forKey: .signature)
        try container.encode(diagnostics, forKey: .diagnostics)
    }

    /// docs/sync.md: every product installed or unchanged is a success; any refusal (a bad
    /// signature, an invalid catalog, an unknown product, a package that is not its entry) makes
    /// the sync refused, since it needs a person; otherwise any failure makes it failed. A check
    /// with a product to update and nothing refused or failed has updates available.
    public var outcome: Outcome {
        let statuses = products.map(\.status)
        let catalogErrors = diagnostics.filter { $0.severity == .error }
        if statuses.contains(.refused) || catalogErrors.contains(where: { $0.code.disposition == .refused }) { return .refused }
        if statuses.contains(.failed) || !catalogErrors.isEmpty { return .failed }
        return statuses.contains(.update) ? .updatesAvailable : .success
    }
}
