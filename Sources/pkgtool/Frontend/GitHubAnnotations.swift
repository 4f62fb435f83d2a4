import PkgKitDiagnostics
import PkgKit

/// `validate --reporter github`: one GitHub Actions workflow command per diagnostic,
/// `::error file=PACKAGE,title=CODE::ENTRY: MESSAGE` (`::warning` for a warning), so that each
/// finding is shown as an annotation of the run, then the summary line of each package.
enum GitHubAnnotations {
    /// The lines for `report`; with `quiet`, errors only and no summaries.
    static func lines(_ report: ValidationReport, strict: Bool, quiet: Bool) -> [String] {
        var lines: [String] = []
        for diagnostic in report.diagnostics where !quiet || diagnostic.severity == .error {
            lines.append(command(diagnostic, file: ValidateReporter.subject(of: diagnostic)))
        }
        for package in report.packages {
            for diagnostic in package.diagnostics where !quiet || diagnostic.severity == .error {
                lines.append(command(diagnostic, file: package.path))
            }
        }
        if !quiet {
            lines += report.packages.map { PackageSummary.line($0, strict: strict) }
        }
        return lines
    }

    /// One workflow command.
    static func command(_ diagnostic: Diagnostic, file: String) -> String {
        "::\(diagnostic.severity.rawValue) file=\(property(file)),title=\(property(diagnostic.code.rawValue))::"
            + data(ValidateReporter.message(diagnostic, file: file))
    }

    /// A command's message, escaped as the runner unescapes it: a line break would end the
    /// command, and a `%` would start an escape.
    static func data(_ text: String) -> String {
        ScalarEscaping.escaped(text, dataEscapes)
    }

    private static let dataEscapes: [Unicode.Scalar: String] = ["%": "%25", "\r": "%0D", "\n": "%0A"]
    private static let propertyEscapes = dataEscapes.merging([":": "%3A", ",": "%2C"]) { first, _ in first }

    /// A property's value (`file=`, `title=`): as `data`, and `:` and `,`, which end a value.
    static func property(_ text: String) -> String {
        ScalarEscaping.escaped(text, propertyEscapes)
    }
}
