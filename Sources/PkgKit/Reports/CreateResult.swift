import PkgKitDiagnostics
import PkgKitFormat

/// What `create` did (the JSON shape of docs/json.md).
public struct CreateResult: Sendable, Codable, OutcomeReporting {
    /// The package written, or nil when errors stopped it.
    @Nullable public var output: String?
    public var format: OutputFormat
    @Nullable public var productIdentifier: String?
    @Nullable public var contentVersion: String?
    public var fileCount: Int
    public var payloadBytes: Int64
    @Nullable public var archiveBytes: Int64?
    @Nullable public var sha256: String?
    /// Junk left out of the package.
    public var skipped: [String]
    public var diagnostics: [Diagnostic]
    /// Whether the error that stopped the run before it could judge the source was a refusal or
    /// a failure; nil when the source was judged. Not in the JSON.
    public var stoppedBy: ErrorDisposition? = nil

    private enum CodingKeys: String, CodingKey {
        case output, format, productIdentifier, contentVersion, fileCount, payloadBytes, archiveBytes, sha256, skipped, diagnostics
    }

    /// Written; refused by the rules; or as the error that stopped the run says.
    public var outcome: Outcome {
        if let stoppedBy { return Outcome(stoppedBy) }
        return output == nil ? .refused : .success
    }

    /// The result of a run that `error` stopped before it could judge the source: nothing written.
    public init(failed format: OutputFormat, by error: any DiagnosableError) {
        self.init(output: nil, format: format, productIdentifier: nil, contentVersion: nil, fileCount: 0, payloadBytes: 0,
                  archiveBytes: nil, sha256: nil, skipped: [], diagnostics: [error.diagnostic])
        stoppedBy = error.disposition
    }

    package init(output: String?, format: OutputFormat, productIdentifier: String?, contentVersion: String?, fileCount: Int,
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
}
