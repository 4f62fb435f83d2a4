import ArgumentParser
import PkgKitDiagnostics
import PkgKit

/// How `validate` prints its findings (`--reporter`): as text for people, or in a form a CI
/// system reads. Whatever the form, the exit status is the same.
enum ValidateReporter: String, CaseIterable, ExpressibleByArgument {
    /// `error[code] path: message` lines on stderr as each package is done, a summary line per
    /// package on stdout.
    case text
    /// GitHub Actions workflow commands on stdout (`GitHubAnnotations`).
    case github
    /// One JUnit XML document on stdout (`JUnitDocument`).
    case junit

    /// Prints `report` in this form, once every package is done; nothing for `text`, which
    /// prints as it goes.
    func print(_ report: ValidationReport, strict: Bool, quiet: Bool) {
        switch self {
        case .text:
            return
        case .github:
            for line in GitHubAnnotations.lines(report, strict: strict, quiet: quiet) { Console.out(line) }
        case .junit:
            Console.out(JUnitDocument.xml(report))
        }
    }

    /// The package a diagnostic of the run as a whole (not of one package) is about.
    static func subject(of diagnostic: Diagnostic) -> String {
        diagnostic.path ?? "validate"
    }

    /// A diagnostic's entry (as the archive has it) and message, for a package named `file`:
    /// `Contents/a.txt: message`, or the message alone when it concerns the package itself.
    static func message(_ diagnostic: Diagnostic, file: String) -> String {
        guard let entry = diagnostic.archivePath ?? diagnostic.path, entry != file else { return diagnostic.message }
        return "\(entry): \(diagnostic.message)"
    }
}
