import ArgumentParser
import Foundation
import PkgKit

/// Where the command line writes: results to stdout, diagnostics and progress to stderr.
enum Console {
    /// Writes a line to stdout.
    static func out(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    /// Writes a line to stderr.
    static func err(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    /// Prints diagnostics as `severity[code] path: message` on stderr; with `quiet`, errors only.
    static func print(_ diagnostics: [Diagnostic], quiet: Bool) {
        for diagnostic in diagnostics where !quiet || diagnostic.severity == .error {
            err(line(for: diagnostic))
        }
    }

    /// One diagnostic as a line of text: `severity[code] path: message`, or without the path
    /// when the finding concerns the package as a whole.
    static func line(for diagnostic: Diagnostic) -> String {
        let head = "\(diagnostic.severity.rawValue)[\(diagnostic.code.rawValue)]"
        guard let path = diagnostic.path else { return "\(head): \(diagnostic.message)" }
        return "\(head) \(path): \(diagnostic.message)"
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
        let data = (try? encoder.encode(value)) ?? Data("{}".utf8)
        FileHandle.standardOutput.write(data + Data("\n".utf8))
    }
}
