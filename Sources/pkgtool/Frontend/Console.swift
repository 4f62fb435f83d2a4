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

    /// One diagnostic as a line of text.
    static func line(for diagnostic: Diagnostic) -> String {
        "\(diagnostic.severity.rawValue)[\(diagnostic.code.rawValue)] \(diagnostic.path ?? "-"): \(diagnostic.message)"
    }

    /// Prints `value` as one JSON document on stdout.
    static func json<T: Encodable>(_ value: T) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(value)) ?? Data("{}".utf8)
        FileHandle.standardOutput.write(data + Data("\n".utf8))
    }

    /// Prints `message` and returns the exit status 2 (input unreadable, I/O error) to throw.
    static func fail(_ message: String) -> ExitCode {
        err("error: \(message)")
        return ExitCode(2)
    }
}
