import ArgumentParser
import Foundation
import PkgKitDiagnostics
import PkgKit

/// Where the command line writes: results to stdout, diagnostics and progress to stderr.
enum Console {
    /// How diagnostics word their hints: in the running command's flags once it starts
    /// (`CommandReporting.run`), PkgKit's plain words before.
    static var wording: DiagnosticWording {
        get { currentWording.current }
        set { currentWording.withLock { $0 = newValue } }
    }
    private static let currentWording = LockedValue(DiagnosticWording.plain)

    /// Writes a line to stdout.
    static func out(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    /// Writes a line to stderr.
    static func err(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    /// Prints diagnostics about `file` on stderr, one line each (see `line(for:file:several:)`);
    /// with `quiet`, errors only.
    static func print(_ diagnostics: [Diagnostic], file: String?, several: Bool = false, quiet: Bool) {
        for diagnostic in diagnostics where !quiet || diagnostic.severity == .error {
            err(line(for: diagnostic, file: file, several: several))
        }
    }

    /// One diagnostic as a line that names the file it concerns (docs/commands.md):
    /// `severity[code] FILE: message` for the package (or input) as a whole, and for an entry
    /// `severity[code] ENTRY: message`, or `severity[code] FILE ENTRY: message` when `several`
    /// packages are in play. A diagnostic whose path is the file itself names it once.
    static func line(for diagnostic: Diagnostic, file: String?, several: Bool = false) -> String {
        let head = "\(diagnostic.severity.rawValue)[\(diagnostic.code.rawValue)]"
        var names: [String] = []
        if let file, diagnostic.path == nil || (several && diagnostic.path != file) { names.append(file) }
        // The entry as it is in the archive, where the user can find it (inside a wrapping folder).
        if let path = diagnostic.archivePath ?? diagnostic.path { names.append(path) }
        let message = diagnostic.message(in: wording)
        guard !names.isEmpty else { return "\(head): \(message)" }
        return "\(head) \(names.joined(separator: " ")): \(message)"
    }

    /// `count` and `noun`, in the plural unless there is one: "1 error", "2 warnings".
    static func count(_ count: Int, _ noun: String) -> String {
        "\(count) \(noun)\(count == 1 ? "" : "s")"
    }

    /// How many errors and warnings `diagnostics` hold, in words.
    static func tally(_ diagnostics: [Diagnostic]) -> String {
        let errors = diagnostics.filter { $0.severity == .error }.count
        return "\(count(errors, "error")), \(count(diagnostics.count - errors, "warning"))"
    }

    /// Prints `value` as one JSON document on stdout.
    static func json<T: Encodable>(_ value: T) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.userInfo[DiagnosticWording.userInfoKey] = wording
        let data = (try? encoder.encode(value)) ?? Data("{}".utf8)
        FileHandle.standardOutput.write(data + Data("\n".utf8))
    }
}
