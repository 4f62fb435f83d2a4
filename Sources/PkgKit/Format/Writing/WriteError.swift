import PkgKitDiagnostics

/// Why writing a package failed. Every case is a failure of the work, not a refusal: the
/// output could not be written as asked.
public enum WriteError: DiagnosableError, Sendable {
    /// zlib refused the data (should not happen on valid input).
    case compression(String)
    /// The system refused a read or write.
    case io(path: String, String)
    /// A source file changed while the package was being written.
    case sourceChanged(path: String)

    /// `io-error` on the file concerned.
    public var diagnostic: Diagnostic {
        switch self {
        case .compression(let message): return Diagnostic(.ioError, path: nil, message)
        case .io(let path, let message): return Diagnostic(.ioError, path: path, message)
        case .sourceChanged(let path):
            return Diagnostic(.ioError, path: path, "the file changed while the package was being written; run create again")
        }
    }

    public var disposition: ErrorDisposition { .failed }
}
