import PkgKitDiagnostics

/// Why an install could not be done: always a failure of the work (exit status 2 in `pkgtool`),
/// never a refusal. The previous version and its record are intact whenever this is thrown.
public enum InstallError: DiagnosableError, Sendable, Equatable, CustomStringConvertible {
    /// A system call failed (read-only folder, disk full, …).
    case io(path: String, String)
    /// The destination is not safe to write into (a symbolic link where a folder must be).
    case unsafeDestination(path: String, String)
    /// The output folder is a file (or lies under one): a front end says which folder to give.
    case notAFolder(path: String)
    /// The package's data differed on the second read from what validation saw, or passed the size limit.
    case packageChanged(String)

    public var description: String {
        switch self {
        case .io(let path, let message): return "\(path): \(message)"
        case .unsafeDestination(let path, let message): return "\(path): \(message)"
        case .packageChanged(let message): return message
        case .notAFolder(let path): return "\(path): \(Self.notAFolderWords)"
        }
    }

    /// `io-error` on the path that could not be written.
    public var diagnostic: Diagnostic {
        switch self {
        case .io(let path, let message), .unsafeDestination(let path, let message): return Diagnostic(.ioError, path: path, message)
        case .packageChanged(let message): return Diagnostic(.ioError, path: nil, message)
        case .notAFolder(let path): return Diagnostic(.ioError, path: path, words: Self.notAFolderWords)
        }
    }

    public var disposition: ErrorDisposition { .failed }

    private static let notAFolderWords: DiagnosticMessage = "not a folder: \(hint: .outputFolder)"
}
