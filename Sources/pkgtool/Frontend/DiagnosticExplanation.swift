import PkgKitDiagnostics
import PkgKit

/// What one diagnostic code means, for `pkgtool explain` and the reference in docs/diagnostics.md,
/// which is generated from the same table so that the two cannot disagree.
///
/// The table lives in the front end, not in PkgKit, because its advice names pkgtool's commands
/// and flags, which PkgKit's texts never do.
struct DiagnosticExplanation: Encodable, Sendable {
    /// The code explained.
    let code: DiagnosticCode
    /// One line: what the code says is wrong.
    let summary: String
    /// When it is reported, and by which commands.
    let when: String
    /// What to do about it.
    let fix: String
    /// A line as pkgtool prints it on stderr.
    let example: String

    init(_ code: DiagnosticCode, _ summary: String, when: String, fix: String, example: String) {
        self.code = code
        self.summary = summary
        self.when = when
        self.fix = fix
        self.example = example
    }

    /// The severity every command gives the code.
    var severity: Severity { code.defaultSeverity }

    /// When, how to fix it and the example, as prose: `explain`'s body, and its JSON `explanation`.
    var explanation: String {
        "When: \(when)\nFix: \(fix)\nExample: \(example)"
    }

    /// The explanation of the code spelt `name`, if it is one.
    static func named(_ name: String) -> DiagnosticExplanation? {
        all.first { $0.code.rawValue == name }
    }

    private enum CodingKeys: String, CodingKey {
        case code, severity, summary, explanation, when, fix, example
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(code, forKey: .code)
        try container.encode(severity, forKey: .severity)
        try container.encode(summary, forKey: .summary)
        try container.encode(explanation, forKey: .explanation)
        try container.encode(when, forKey: .when)
        try container.encode(fix, forKey: .fix)
        try container.encode(example, forKey: .example)
    }
}
