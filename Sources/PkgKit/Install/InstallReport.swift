/// The result of one install: `pkgtool extract --json` (SPEC section 5).
public struct InstallReport: Sendable, Encodable {
    public var status: InstallStatus
    public var productIdentifier: String?
    public var contentVersion: String?
    /// The version the record named before this run, if any.
    public var previousVersion: String?
    /// `DIR/<id>/<version>` when installed or unchanged.
    public var installedPath: String?
    public var fileCount: Int
    public var payloadBytes: Int64
    /// Version folders removed by `--keep`.
    public var removedVersions: [String]
    public var diagnostics: [Diagnostic]

    /// A `refused` report on a checked package, to be filled in as the install goes on.
    init(_ check: PackageCheck, previousVersion: String? = nil) {
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

    enum CodingKeys: String, CodingKey {
        case status, productIdentifier, contentVersion, previousVersion, installedPath, fileCount, payloadBytes,
             removedVersions, diagnostics
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(status, forKey: .status)
        try c.encode(productIdentifier, forKey: .productIdentifier)
        try c.encode(contentVersion, forKey: .contentVersion)
        try c.encode(previousVersion, forKey: .previousVersion)
        try c.encode(installedPath, forKey: .installedPath)
        try c.encode(fileCount, forKey: .fileCount)
        try c.encode(payloadBytes, forKey: .payloadBytes)
        try c.encode(removedVersions, forKey: .removedVersions)
        try c.encode(diagnostics, forKey: .diagnostics)
    }
}
