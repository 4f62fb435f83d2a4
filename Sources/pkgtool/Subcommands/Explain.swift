import ArgumentParser
import PkgKit
import Foundation

extension Pkgtool {
    /// `pkgtool explain`: what a diagnostic code means, or the list of every code.
    struct Explain: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "explain",
            abstract: "Explain a diagnostic code: its severity, when it is reported, how to fix it.",
            discussion: """
            CODE is the word in brackets of a diagnostic line (size-limit in \
            'error[size-limit] big.pkg: ...'); the whole 'error[size-limit]' is accepted too. \
            Without CODE, every code is listed with its severity and one-line summary. With --json, \
            one object {code, severity, summary, explanation} (and when, fix, example), or a list \
            of them. An unknown CODE is a usage error (exit 64) that names the nearest code.
            """)

        @Argument(help: "A diagnostic code, e.g. size-limit. Omit it to list every code.")
        var code: String?

        /// Prints docs/diagnostics.md (`make docs-reference`).
        @Flag(help: .hidden) var markdown = false

        @OptionGroup var outputOptions: OutputOptions
        @ParentCommand var root: Pkgtool

        func run() throws {
            let output = outputOptions.merged(with: root.outputOptions)
            if markdown {
                Console.out(DiagnosticReference.markdown(DiagnosticExplanation.all))
                return
            }
            guard let code else {
                if output.json {
                    Console.json(DiagnosticExplanation.all)
                } else {
                    printListing(quiet: output.quiet)
                }
                return
            }
            guard let explanation = DiagnosticExplanation.named(Self.codeName(code)) else {
                Console.err(UsageError.text(Self.unknown(code), for: Self.self))
                throw ExitStatus.usage.exitCode
            }
            if output.json {
                Console.json(explanation)
            } else {
                Console.out(DiagnosticReference.text(explanation))
            }
        }

        /// The code in `text`: the code itself in any case, or a whole `error[CODE]` head
        /// copied from a diagnostic line.
        static func codeName(_ text: String) -> String {
            var name = Substring(text.lowercased())
            if let open = name.firstIndex(of: "["), name.hasSuffix("]") {
                name = name[name.index(after: open)..<name.index(before: name.endIndex)]
            }
            return String(name)
        }

        /// The usage error for a code that is none, naming the nearest one.
        static func unknown(_ code: String) -> String {
            var message = "'\(code)' is not a diagnostic code."
            if let nearest = NearestName.suggestion(for: codeName(code), among: DiagnosticExplanation.all.map(\.code.rawValue)) {
                message += " Did you mean '\(nearest)'?"
            }
            return message + " 'pkgtool explain' lists every code."
        }

        private func printListing(quiet: Bool) {
            let width = DiagnosticExplanation.all.map(\.code.rawValue.count).max() ?? 0
            for explanation in DiagnosticExplanation.all {
                let name = explanation.code.rawValue.padding(toLength: width, withPad: " ", startingAt: 0)
                let severity = explanation.severity.rawValue.padding(toLength: 7, withPad: " ", startingAt: 0)
                Console.out("\(name)  \(severity)  \(explanation.summary)")
            }
            if !quiet { Console.out("\n'pkgtool explain CODE' says when a code is reported and how to fix it.") }
        }
    }
}
