
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
    /// The stable kebab-case code from docs/diagnostics.md.
    public var code: DiagnosticCode
    /// `error` or `warning`.
    public var severity: Severity
    /// The archive path the finding concerns (for a failure, the file that could not be read or
    /// written), or nil for the package as a whole.
    @Nullable public var path: String?
    /// What is wrong and what to do about it, its hints kept typed for the program that shows it.
    public var words: DiagnosticMessage

    /// What is wrong and what to do about it, in PkgKit's own words (`message(in:)` words its
    /// hints otherwise). Setting it replaces the message, hints included, with plain text.
    public var message: String {
        get { words.text(.plain) }
        set { words = DiagnosticMessage(newValue) }
    }
    /// The entry's path as it is in the archive, when that differs from `path`: in a package
    /// wrapped in one folder, `path` is relative to the package root and this one starts with
    /// the wrapper (`Desert Pack/.DS_Store`). Left out of JSON when nil.
    public var archivePath: String?

    /// Makes a diagnostic with the code's default severity unless one is given.
    public init(_ code: DiagnosticCode, path: String?, _ message: String, severity: Severity? = nil) {
        self.init(code, path: path, words: DiagnosticMessage(message), severity: severity)
    }

    /// Makes a diagnostic whose message holds hints, with the code's default severity unless
    /// one is given.
    public init(_ code: DiagnosticCode, path: String?, words: DiagnosticMessage, severity: Severity? = nil) {
        self.code = code
        self.severity = severity ?? code.defaultSeverity
        self.path = path
        self.words = words
    }

    /// The message with its hints in `wording`'s words.
    public func message(in wording: DiagnosticWording) -> String {
        words.text(wording)
    }

    private enum CodingKeys: String, CodingKey {
        case code, severity, path, message, archivePath
    }

    /// Reads a diagnostic; its message is plain text.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        code = try container.decode(DiagnosticCode.self, forKey: .code)
        severity = try container.decode(Severity.self, forKey: .severity)
        _path = try container.decodeIfPresent(Nullable<String>.self, forKey: .path) ?? Nullable(wrappedValue: nil)
        words = DiagnosticMessage(try container.decode(String.self, forKey: .message))
        archivePath = try container.decodeIfPresent(String.self, forKey: .archivePath)
    }

    /// Writes `{"code", "severity", "path", "message"}` (and `archivePath` when there is one), the message in the wording the
    /// encoder's `userInfo` holds under `DiagnosticWording.userInfoKey` (else the plain one).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(code, forKey: .code)
        try container.encode(severity, forKey: .severity)
        try container.encode(_path, forKey: .path)
        let wording = encoder.userInfo[DiagnosticWording.userInfoKey] as? DiagnosticWording ?? .plain
        try container.encode(message(in: wording), forKey: .message)
        try container.encodeIfPresent(archivePath, forKey: .archivePath)
    }
}

extension Array where Element == Diagnostic {
    /// True when any finding is an error (or, when `strict`, any finding at all).
    public func failing(strict: Bool = false) -> Bool {
        contains { $0.severity == .error || strict }
    }
}
