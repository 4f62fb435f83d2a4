import PkgKitDiagnostics
import PkgKit

/// `validate --reporter junit`: one JUnit XML document for the whole run. Each package is a
/// `testsuite` named by its path, holding a `testcase` for every rule (each diagnostic code a
/// package can be judged by, and any other code found in it); an error is a `failure` of its
/// rule's test case, a warning that case's `system-out`. A package that was not checked (the run
/// failed first) has its test cases `skipped`. Every name and message is escaped, and characters
/// XML cannot hold are written as `\xNN`, so the document is well-formed whatever the paths.
enum JUnitDocument {
    /// The rules of the package format, in the order `explain` and the docs list them.
    static let rules: [DiagnosticCode] = DiagnosticCode.allCases.filter {
        !DiagnosticCode.notFromRules.contains($0) || $0 == .unreadableInput
    }

    /// The document for `report`.
    static func xml(_ report: ValidationReport) -> String {
        var suites: [Suite] = []
        if !report.diagnostics.isEmpty {
            // Findings about the run, not one package (a previous package that cannot be read).
            let subject = report.diagnostics.first.map(ValidateReporter.subject) ?? "validate"
            suites.append(Suite(name: subject, checked: true, diagnostics: report.diagnostics))
        }
        for package in report.packages {
            suites.append(Suite(name: package.path, checked: package.valid || !package.diagnostics.isEmpty,
                                diagnostics: package.diagnostics))
        }
        let tests = suites.reduce(0) { $0 + $1.cases.count }
        let failures = suites.reduce(0) { $0 + $1.failures }
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        xml += "<testsuites name=\"pkgtool validate\" tests=\"\(tests)\" failures=\"\(failures)\" errors=\"0\">\n"
        for suite in suites { xml += suite.xml }
        xml += "</testsuites>"
        return xml
    }

    /// One package's suite.
    private struct Suite {
        var name: String
        /// False for a package the run never got to.
        var checked: Bool
        var cases: [(code: DiagnosticCode, diagnostics: [Diagnostic])]

        init(name: String, checked: Bool, diagnostics: [Diagnostic]) {
            self.name = name
            self.checked = checked
            let others = diagnostics.map(\.code).filter { !JUnitDocument.rules.contains($0) }
            var seen: Set<DiagnosticCode> = []
            let codes = (JUnitDocument.rules + others).filter { seen.insert($0).inserted }
            cases = codes.map { code in (code, diagnostics.filter { $0.code == code }) }
        }

        /// Test cases with an error.
        var failures: Int { cases.filter { $0.diagnostics.contains { $0.severity == .error } }.count }
        var skipped: Int { checked ? 0 : cases.count }

        var xml: String {
            let suite = escaped(name)
            var xml = "  <testsuite name=\"\(suite)\" tests=\"\(cases.count)\" failures=\"\(failures)\" errors=\"0\" skipped=\"\(skipped)\">\n"
            for (code, diagnostics) in cases {
                let head = "    <testcase classname=\"\(suite)\" name=\"\(code.rawValue)\""
                guard checked else {
                    xml += head + ">\n      <skipped message=\"not checked: the run failed first\"/>\n    </testcase>\n"
                    continue
                }
                guard !diagnostics.isEmpty else {
                    xml += head + "/>\n"
                    continue
                }
                xml += head + ">\n"
                var warnings: [String] = []
                for diagnostic in diagnostics {
                    let message = ValidateReporter.message(diagnostic, file: name)
                    if diagnostic.severity == .error {
                        xml += "      <failure type=\"\(code.rawValue)\" message=\"\(escaped(message))\">"
                            + escaped(Console.line(for: diagnostic, file: name)) + "</failure>\n"
                    } else {
                        warnings.append(Console.line(for: diagnostic, file: name))
                    }
                }
                if !warnings.isEmpty {
                    xml += "      <system-out>" + escaped(warnings.joined(separator: "\n")) + "</system-out>\n"
                }
                xml += "    </testcase>\n"
            }
            return xml + "  </testsuite>\n"
        }
    }

    /// `text` as XML character data or an attribute value.
    static func escaped(_ text: String) -> String {
        ScalarEscaping.escaped(text, xmlEscapes) { scalar in
            guard !allowed(scalar.value) else { return nil }
            return scalar.value <= 0xFF ? "\\x" + hex(scalar.value, 2) : "\\u" + hex(scalar.value, 4)
        }
    }

    /// Markup, and the line breaks and tabs an attribute value would lose, as references.
    private static let xmlEscapes: [Unicode.Scalar: String] = [
        "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&apos;", "\n": "&#10;", "\r": "&#13;", "\t": "&#9;",
    ]

    /// The characters XML 1.0 allows (beyond tab and line breaks).
    private static func allowed(_ value: UInt32) -> Bool {
        (0x20...0xD7FF).contains(value) || (0xE000...0xFFFD).contains(value) || value >= 0x10000
    }

    private static func hex(_ value: UInt32, _ digits: Int) -> String {
        let text = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}
