/// How serious a finding is: errors make a package invalid, warnings do not (unless `--strict`).
public enum Severity: String, Codable, Sendable, Comparable {
    case warning
    case error

    public static func < (lhs: Severity, rhs: Severity) -> Bool {
        lhs == .warning && rhs == .error
    }
}

/// One finding about a package: a stable code, a severity, the archive path concerned and a
/// one-line message that says what is wrong and what to do.
public struct Diagnostic: Codable, Sendable, Equatable, Hashable {
    /// The stable kebab-case code from SPEC section 2.
    public var code: DiagnosticCode
    /// `error` or `warning`.
    public var severity: Severity
    /// The archive path the finding concerns (for a failure, the file that could not be read or
    /// written), or nil for the package as a whole.
    @Nullable public var path: String?
    /// What is wrong and what to do about it.
    public var message: String
    /// The entry's path as it is in the archive, when that differs from `path`: in a package
    /// wrapped in one folder, `path` is relative to the package root and this one starts with
    /// the wrapper (`Desert Pack/.DS_Store`). Left out of JSON when nil.
    public var archivePath: String?

    /// Makes a diagnostic with the code's default severity unless one is given.
    public init(_ code: DiagnosticCode, path: String?, _ message: String, severity: Severity? = nil) {
        self.code = code
        self.severity = severity ?? code.defaultSeverity
        self.path = path
        self.message = message
    }
}

extension Array where Element == Diagnostic {
    /// True when any finding is an error (or, when `strict`, any finding at all).
    public func failing(strict: Bool = false) -> Bool {
        contains { $0.severity == .error || strict }
    }
}
