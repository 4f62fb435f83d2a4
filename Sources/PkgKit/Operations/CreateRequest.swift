/// Everything `pkgtool create` was asked to do.
public struct CreateRequest: Sendable {
    /// The source folder.
    public var source: String
    /// The output path; default `./<IAPProductIdentifier>.pkg`.
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

/// Why `create` could not run at all (exit 2), as opposed to refusing an invalid source (exit 1).
public struct CreateFailure: Error, Sendable {
    /// What went wrong, with the path concerned.
    public var message: String
}
