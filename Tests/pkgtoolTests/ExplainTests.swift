import Foundation
import PkgKit
import Testing
import TestSupport
@testable import pkgtool

/// The table `pkgtool explain` and docs/diagnostics.md are made from: one entry for every code
/// the program can print, and the committed reference made from it.
@Suite struct ExplainTests {
    let codes = DiagnosticExplanation.all.map(\.code)

    @Test func everyDiagnosticCodeHasExactlyOneEntry() {
        #expect(Set(codes) == Set(DiagnosticCode.allCases), "codes without an entry: \(Set(DiagnosticCode.allCases).subtracting(codes))")
        #expect(codes.count == Set(codes).count, "a code explained twice")
    }

    /// Every code named where a diagnostic is made (`Diagnostic(.code, …)`, `DiagnosticCode.code`)
    /// or spelt out as a printed line (`error[code]`) anywhere in Sources is a code with an entry.
    @Test func everyCodeTheSourcesUseHasAnEntry() throws {
        let caseNames = Dictionary(uniqueKeysWithValues: codes.map { (String(describing: $0), $0) })
        let spelt = Set(codes.map(\.rawValue))
        let made = try NSRegularExpression(pattern: #"(?:Diagnostic\(\s*\.|DiagnosticCode\.)([a-z][a-zA-Z]*)\b"#)
        let printed = try NSRegularExpression(pattern: #"(?:error|warning)\[([a-z0-9-]+)\]"#)
        var checked = 0
        for file in try Self.swiftFiles(under: CommandRunner.packageRoot.appendingPathComponent("Sources").path) {
            let text = try String(contentsOfFile: file, encoding: .utf8)
            let range = NSRange(text.startIndex..., in: text)
            for match in made.matches(in: text, range: range) {
                let name = String(text[Range(match.range(at: 1), in: text)!])
                guard !["init", "self", "allCases", "notFromRules"].contains(name) else { continue }
                #expect(caseNames[name] != nil, "\(file) makes a diagnostic with .\(name), which has no explanation")
                checked += 1
            }
            for match in printed.matches(in: text, range: range) {
                let code = String(text[Range(match.range(at: 1), in: text)!])
                guard code != "code" else { continue }
                #expect(spelt.contains(code), "\(file) prints \(code), which has no explanation")
                checked += 1
            }
        }
        #expect(checked > 50, "the scan found only \(checked) uses: its patterns no longer match the sources")
    }

    @Test func everyExampleIsALineOfItsOwnCodeAndSeverity() {
        for explanation in DiagnosticExplanation.all {
            let head = "\(explanation.severity.rawValue)[\(explanation.code.rawValue)] "
            #expect(explanation.example.hasPrefix(head), "\(explanation.code.rawValue)'s example does not start with \(head)")
            #expect(!explanation.example.contains("\n"))
            #expect(!explanation.summary.contains("\n") && explanation.summary.hasSuffix("."), "\(explanation.code.rawValue)'s summary")
            #expect(!explanation.when.isEmpty && !explanation.fix.isEmpty)
        }
    }

    /// docs/diagnostics.md is what `make docs-reference` writes from the table: a code added or
    /// reworded without regenerating it fails here.
    @Test func theCommittedReferenceIsTheTablesOwn() throws {
        let committed = try String(contentsOfFile: CommandRunner.packageRoot.appendingPathComponent("docs/diagnostics.md").path, encoding: .utf8)
        #expect(committed == DiagnosticReference.markdown(DiagnosticExplanation.all) + "\n",
                "docs/diagnostics.md differs from the explanation table: run `make docs-reference`")
    }

    @Test func proseIsWrappedAtEightyColumnsWithoutLosingAWord() {
        let text = String(repeating: "word ", count: 60) + "end"
        let wrapped = DiagnosticReference.wrapped(text, indent: "  ")
        #expect(wrapped.split(separator: "\n").allSatisfy { $0.count <= DiagnosticReference.columns })
        #expect(wrapped.split(whereSeparator: { $0 == " " || $0 == "\n" }) == text.split(separator: " "))
    }

    @Test func markdownEscapesWhatWouldBecomeMarkup() {
        #expect(DiagnosticReference.escaped("*.app, __MACOSX/, <sha256>") == #"\*.app, \_\_MACOSX/, &lt;sha256&gt;"#)
    }

    static func swiftFiles(under folder: String) throws -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: folder)
        var files: [String] = []
        while let relative = enumerator?.nextObject() as? String {
            if relative.hasSuffix(".swift") { files.append(folder + "/" + relative) }
        }
        return files.sorted()
    }
}
