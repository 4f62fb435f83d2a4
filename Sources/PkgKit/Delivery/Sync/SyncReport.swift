/// What became of one product in a sync.
public enum SyncStatus: String, Sendable, Codable {
    /// The catalog's latest version was downloaded and installed.
    case installed
    /// Nothing to do: the installed version is the latest (or newer; sync never downgrades).
    case unchanged
    /// Refused: a bad signature, a package that is not its catalog entry, a rule, an unknown
    /// product. Needs a person; nothing was installed.
    case refused
    /// Could not be done: the server could not be reached, HTTP 404, disk full. May pass by itself;
    /// nothing was installed, and a partial download is kept for the next run.
    case failed
}

/// One product's outcome (`pkgtool sync --json`, SPEC section 7).
public struct ProductSyncResult: Sendable, Encodable, Equatable {
    /// The product.
    public var productIdentifier: String
    /// What became of it.
    public var status: SyncStatus
    /// The version installed before the sync, if any.
    public var previousVersion: String?
    /// The catalog's latest version (the one installed, when `installed`).
    public var contentVersion: String?
    /// True when the package was assembled from a partial download and installed files.
    public var delta: Bool
    /// Bytes of package data received for this product.
    public var bytesDownloaded: Int64
    /// On the delta path, how many files under `Contents/` were downloaded (the rest were reused).
    public var filesDownloaded: Int?
    /// Where the current version is installed (`DIR/<id>/<version>`), when installed or unchanged.
    public var installedPath: String?
    /// Findings: why it was refused or failed, or warnings.
    public var diagnostics: [Diagnostic]

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
        self.installedPath = installedPath
        self.diagnostics = diagnostics
    }

    enum CodingKeys: String, CodingKey {
        case productIdentifier, status, previousVersion, contentVersion, delta, bytesDownloaded, filesDownloaded, installedPath, diagnostics
    }

    /// Absent values are `null`, never a missing key.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(productIdentifier, forKey: .productIdentifier)
        try c.encode(status, forKey: .status)
        try c.encode(previousVersion, forKey: .previousVersion)
        try c.encode(contentVersion, forKey: .contentVersion)
        try c.encode(delta, forKey: .delta)
        try c.encode(bytesDownloaded, forKey: .bytesDownloaded)
        try c.encode(filesDownloaded, forKey: .filesDownloaded)
        try c.encode(installedPath, forKey: .installedPath)
        try c.encode(diagnostics, forKey: .diagnostics)
    }
}

/// A whole sync's outcome (`pkgtool sync --json`).
public struct SyncReport: Sendable, Encodable, Equatable {
    /// One result per product, in the order they were synced (sorted by identifier).
    public var products: [ProductSyncResult]
    /// Every byte received: the catalog, its signature and package data.
    public var bytesDownloaded: Int64
    /// Findings about the catalog itself (unreachable, invalid, badly signed); each affected
    /// product carries them too.
    public var diagnostics: [Diagnostic]

    /// A report.
    public init(products: [ProductSyncResult] = [], bytesDownloaded: Int64 = 0, diagnostics: [Diagnostic] = []) {
        self.products = products
        self.bytesDownloaded = bytesDownloaded
        self.diagnostics = diagnostics
    }

    /// SPEC section 7: 0 when every product is installed or unchanged; 1 when any was refused
    /// (refusal wins: it needs a person); otherwise 2 when any could not be done.
    public var exitCode: Int32 {
        let statuses = products.map(\.status)
        let catalogCodes = Set(diagnostics.filter { $0.severity == .error }.map(\.code))
        if statuses.contains(.refused) || !catalogCodes.isDisjoint(with: [.badSignature, .invalidCatalog, .unknownProduct]) { return 1 }
        if statuses.contains(.failed) || !catalogCodes.isEmpty { return 2 }
        return 0
    }
}

/// How far a sync has got, reported as it goes.
public struct SyncProgress: Sendable, Equatable {
    /// What is happening.
    public enum Phase: String, Sendable {
        /// Fetching the catalog (and its signature).
        case catalog
        /// Downloading a package, or the parts of it that changed.
        case downloading
        /// Reading the downloaded package, verifying it and writing the version folder.
        case installing
    }

    /// The product concerned (nil while fetching the catalog).
    public var productIdentifier: String?
    /// What is happening.
    public var phase: Phase
    /// Bytes done.
    public var done: Int64
    /// Bytes in all (0 when not known yet).
    public var total: Int64
}
