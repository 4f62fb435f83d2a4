import PkgKitDiagnostics

/// A catalog signature that is missing, malformed or does not verify with any trusted key:
/// `bad-signature`, a refusal.
public struct SignatureError: DiagnosableError, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong, in words for a diagnostic, its hints kept typed.
    public var words: DiagnosticMessage
    /// What is wrong, in PkgKit's own words.
    public var reason: String { words.description }
    /// The signature file concerned: `signatures/<sha256>.sig` relative to the catalog, or its
    /// URL when it was fetched.
    public var path: String

    /// An error with this reason, about the signature file at `path`.
    public init(_ reason: DiagnosticMessage, path: String) {
        words = reason
        self.path = path
    }

    /// The `bad-signature` diagnostic for this error, naming the signature file once.
    public var diagnostic: Diagnostic { Diagnostic(.badSignature, path: path, words: words) }

    /// A catalog that cannot be trusted needs a person: `refused`.
    public var disposition: ErrorDisposition { .refused }

    /// `path: reason`.
    public var description: String { "\(path): \(reason)" }
}
