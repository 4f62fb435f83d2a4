import PkgKitDiagnostics

/// `extract`'s report (docs/json.md): the installer's, or the same shape for an install that
/// could not be done at all, as `sync` reports a product it could not install.
public enum ExtractReport: Sendable, Encodable, OutcomeReporting {
    /// The installer ran: installed, unchanged or refused.
    case done(InstallReport)
    /// An error stopped the install before the installer could report.
    case stopped(StoppedInstall)

    public var outcome: Outcome {
        switch self {
        case .done(let report): return report.outcome
        case .stopped(let stopped): return Outcome(stopped.status)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .done(let report): try report.encode(to: encoder)
        case .stopped(let stopped): try stopped.encode(to: encoder)
        }
    }
}

/// An install an error stopped: `InstallReport`'s keys, its status `failed` (or `refused`, as the
/// error's disposition says), nothing installed, and the error's diagnostic.
public struct StoppedInstall: Sendable, Encodable {
    /// `failed` or `refused`.
    public var status: ErrorDisposition
    @Nullable public var productIdentifier: String? = nil
    @Nullable public var contentVersion: String? = nil
    @Nullable public var previousVersion: String? = nil
    @Nullable public var installedPath: String? = nil
    public var fileCount = 0
    public var payloadBytes: Int64 = 0
    public var removedVersions: [String] = []
    public var diagnostics: [Diagnostic]

    /// The install `error` stopped.
    public init(_ error: any DiagnosableError) {
        status = error.disposition
        diagnostics = [error.diagnostic]
    }
}
