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
    /// The archive path the finding concerns, or nil for the package as a whole.
    public var path: String?
    /// What is wrong and what to do about it.
    public var message: String

    /// Makes a diagnostic with the code's default severity unless one is given.
    public init(_ code: DiagnosticCode, path: String?, _ message: String, severity: Severity? = nil) {
        self.code = code
        self.severity = severity ?? code.defaultSeverity
        self.path = path
        self.message = message
    }

    enum CodingKeys: String, CodingKey { case code, severity, path, message }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(code, forKey: .code)
        try c.encode(severity, forKey: .severity)
        // Absent values are `null` in every JSON shape, never a missing key.
        try c.encode(path, forKey: .path)
        try c.encode(message, forKey: .message)
    }
}

extension Array where Element == Diagnostic {
    /// True when any finding is an error (or, when `strict`, any finding at all).
    public func failing(strict: Bool = false) -> Bool {
        contains { $0.severity == .error || strict }
    }
}
