/// Everything `pkgtool create` was asked to do.
public struct CreateRequest: Sendable {
    /// The source folder.
    public var source: String
    /// The output path; default `./<IAPProductIdentifier>-<ContentVersion>.pkg`. An existing folder
    /// (or a path ending in `/`) receives the default name inside it.
    public var output: String?
    /// A ContentInfo.plist from elsewhere.
    public var plist: String?
    /// `--product-id`.
    public var productIdentifier: String?
    /// `--content-version`.
    public var contentVersion: String?
    /// `--previous`: the package or folder this one updates.
    public var previous: String?
    /// `--bump`.
    public var bump: ContentVersion.Part?
    /// Container, compression, level, jobs, timestamp.
    public var options: WriteOptions
    /// `--max-size`.
    public var limits: PackageLimits

    public init(source: String, output: String? = nil, plist: String? = nil, productIdentifier: String? = nil,
                contentVersion: String? = nil, previous: String? = nil, bump: ContentVersion.Part? = nil,
                options: WriteOptions = WriteOptions(), limits: PackageLimits = PackageLimits()) {
        self.source = source
        self.output = output
        self.plist = plist
        self.productIdentifier = productIdentifier
        self.contentVersion = contentVersion
        self.previous = previous
        self.bump = bump
        self.options = options
        self.limits = limits
    }
}

/// What `create` did (the JSON shape of SPEC section 5).
public struct CreateResult: Sendable, Codable {
    /// The package written, or nil when errors stopped it.
    public var output: String?
    public var format: OutputFormat
    public var productIdentifier: String?
    public var contentVersion: String?
    public var fileCount: Int
    public var payloadBytes: Int64
    public var archiveBytes: Int64?
    public var sha256: String?
    /// Junk left out of the package.
    public var skipped: [String]
    public var diagnostics: [Diagnostic]

    /// The result of a run that failed before it could judge the source: nothing written.
    public init(failed format: OutputFormat, diagnostics: [Diagnostic]) {
        self.init(output: nil, format: format, productIdentifier: nil, contentVersion: nil, fileCount: 0, payloadBytes: 0,
                  archiveBytes: nil, sha256: nil, skipped: [], diagnostics: diagnostics)
    }

    init(output: String?, format: OutputFormat, productIdentifier: String?, contentVersion: String?, fileCount: Int,
         payloadBytes: Int64, archiveBytes: Int64?, sha256: String?, skipped: [String], diagnostics: [Diagnostic]) {
        self.output = output
        self.format = format
        self.productIdentifier = productIdentifier
        self.contentVersion = contentVersion
        self.fileCount = fileCount
        self.payloadBytes = payloadBytes
        self.archiveBytes = archiveBytes
        self.sha256 = sha256
        self.skipped = skipped
        self.diagnostics = diagnostics
    }

    enum CodingKeys: String, CodingKey {
        case output, format, productIdentifier, contentVersion, fileCount, payloadBytes, archiveBytes, sha256, skipped, diagnostics
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(output, forKey: .output)
        try c.encode(format, forKey: .format)
        try c.encode(productIdentifier, forKey: .productIdentifier)
        try c.encode(contentVersion, forKey: .contentVersion)
        try c.encode(fileCount, forKey: .fileCount)
        try c.encode(payloadBytes, forKey: .payloadBytes)
        try c.encode(archiveBytes, forKey: .archiveBytes)
        try c.encode(sha256, forKey: .sha256)
        try c.encode(skipped, forKey: .skipped)
        try c.encode(diagnostics, forKey: .diagnostics)
    }
}

/// Why `create` could not run at all, as opposed to refusing an invalid source (exit 1).
public struct CreateFailure: Error, Sendable {
    /// What kind of failure it is: it decides the exit status.
    public enum Kind: Sendable {
        /// An input (the source, `--plist`, `--previous`) is missing or cannot be read (exit 2).
        case unreadableInput
        /// The output cannot be written (exit 2).
        case io
        /// The request itself is wrong (exit 64): the source is a file, `--bump` has no version to
        /// start from, the output is the `--previous` package.
        case usage
    }

    public var kind: Kind
    /// What went wrong, with the path concerned.
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }
}
