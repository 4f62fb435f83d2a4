import PkgKitDiagnostics

/// Why a key file could not be used: not PEM, not Ed25519, malformed (`unreadable-input`: the
/// key given is an input that cannot be read as a key, a failure).
public struct KeyError: DiagnosableError, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong and what to do, in words for a diagnostic.
    public var reason: String
    /// The key file concerned, when whoever read it said which (see `at(_:)`).
    public var path: String?

    /// An error with this reason.
    public init(_ reason: String, path: String? = nil) {
        self.reason = reason
        self.path = path
    }

    /// The same error about the key file at `path`: the parsers see text, not files, so the
    /// caller that read the file names it.
    public func at(_ path: String) -> KeyError {
        KeyError(reason, path: path)
    }

    /// The `unreadable-input` diagnostic, naming the key file once.
    public var diagnostic: Diagnostic { Diagnostic(.unreadableInput, path: path, reason) }

    /// A key that cannot be read stops the work before it starts: `failed`.
    public var disposition: ErrorDisposition { .failed }

    /// The reason.
    public var description: String { reason }
}
