import PkgKitDiagnostics

/// Why `keygen` wrote nothing.
public enum KeyFileError: DiagnosableError, Sendable, Equatable, CustomStringConvertible {
    /// A key file exists and cannot be used: `unreadable-input`, a failure.
    case unreadable(path: String, String)
    /// The files that exist do not belong together: `bad-signature`, a refusal.
    case refused(path: String, String)
    /// The key files cannot be written (a folder that cannot be created, a read-only file
    /// system, a path under a regular file): `io-error`, a failure.
    case io(path: String, String)

    /// The file concerned.
    public var path: String {
        switch self {
        case .unreadable(let path, _), .refused(let path, _), .io(let path, _): return path
        }
    }

    /// What is wrong and what to do, without the path.
    public var reason: String {
        switch self {
        case .unreadable(_, let reason), .refused(_, let reason), .io(_, let reason): return reason
        }
    }

    /// `path: reason`.
    public var description: String { "\(path): \(reason)" }

    /// The diagnostic, naming the file once: `bad-signature` for key files that do not match,
    /// `io-error` when they cannot be written, `unreadable-input` when one cannot be read.
    public var diagnostic: Diagnostic {
        switch self {
        case .refused: return Diagnostic(.badSignature, path: path, reason)
        case .io: return Diagnostic(.ioError, path: path, reason)
        case .unreadable: return Diagnostic(.unreadableInput, path: path, reason)
        }
    }

    /// `refused` for key files that do not belong together, else `failed`.
    public var disposition: ErrorDisposition {
        if case .refused = self { return .refused }
        return .failed
    }
}
