import PkgKitDiagnostics

/// Publishing could not be done (a failure): a package given cannot be read
/// (`unreadable-input`), or the published folder cannot be read or written (`io-error`: a
/// folder that cannot be created, a read-only file system, a path under a regular file, a full
/// disk). What was written before stays; the catalog is written last, so it never names a
/// package that is not in place.
public struct PublishError: DiagnosableError, Sendable, Equatable, CustomStringConvertible {
    /// The file concerned.
    public var path: String
    /// What went wrong (without the path, which the diagnostic names).
    public var reason: String
    /// `io-error` for the published folder, `unreadable-input` for a package given.
    public var code: DiagnosticCode

    /// An error about `path`; by default about the published folder (`io-error`).
    public init(path: String, _ reason: String, code: DiagnosticCode = .ioError) {
        self.path = path
        self.reason = reason
        self.code = code
    }

    /// The diagnostic, naming the file once.
    public var diagnostic: Diagnostic { Diagnostic(code, path: path, reason) }

    /// The work could not be done; a person need not judge anything: `failed`.
    public var disposition: ErrorDisposition { .failed }

    /// `path: reason`.
    public var description: String { "\(path): \(reason)" }
}
