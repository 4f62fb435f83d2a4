import Foundation
import PkgKit
import Testing
import TestSupport

/// End-to-end tests of `pkgtool explain`, run against the built binary.
@Suite(.offThePool) struct ExplainCommandTests {
    @Test func explainingACodeSaysItsSeverityWhenHowToFixAndAnExample() throws {
        let result = try CommandRunner.pkgtool(["explain", "size-limit"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty)
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.first?.hasPrefix("size-limit (error): ") == true, "\(result.stdout)")
        #expect(lines.contains { $0.hasPrefix("When: ") })
        #expect(lines.contains { $0.hasPrefix("Fix: ") && result.stdout.contains("--max-size") })
        let example = try #require(lines.firstIndex(of: "Example:"))
        #expect(lines[example + 1].hasPrefix("  error[size-limit] "))
        #expect(lines.allSatisfy { $0.count <= 80 || $0.hasPrefix("  error[") }, "prose wrapped at 80 columns")
    }

    @Test func aWarningCodeAndACopiedLineHeadAreExplainedToo() throws {
        let warning = try CommandRunner.pkgtool(["explain", "junk-file"])
        #expect(warning.status == 0)
        #expect(warning.stdout.hasPrefix("junk-file (warning): "))
        let copied = try CommandRunner.pkgtool(["explain", "error[Bad-Signature]"])
        #expect(copied.status == 0, "\(copied.stderr)")
        #expect(copied.stdout.hasPrefix("bad-signature (error): "))
    }

    @Test func explainAloneListsEveryCodeWithItsSeverityAndSummary() throws {
        let result = try CommandRunner.pkgtool(["explain"])
        #expect(result.status == 0, "\(result.stderr)")
        let rows = result.stdout.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true) }
        for code in DiagnosticCode.allCases {
            let row = rows.first { $0.first.map(String.init) == code.rawValue }
            #expect(row?.dropFirst().first.map(String.init) == code.defaultSeverity.rawValue, "no row for \(code.rawValue)")
            #expect((row?.count ?? 0) > 3, "\(code.rawValue) has no summary")
        }
    }

    @Test func jsonGivesOneObjectForACodeAndAListForTheListing() throws {
        let one = try CommandRunner.pkgtool(["explain", "bad-signature", "--json"])
        #expect(one.status == 0)
        #expect(one.stderr.isEmpty)
        let object = one.json
        #expect(object["code"] as? String == "bad-signature")
        #expect(object["severity"] as? String == "error")
        #expect((object["summary"] as? String)?.isEmpty == false)
        let explanation = try #require(object["explanation"] as? String)
        #expect(explanation.contains("When: ") && explanation.contains("Fix: ") && explanation.contains("error[bad-signature] "))

        // --json before the command name counts the same.
        let listing = try CommandRunner.pkgtool(["--json", "explain"])
        #expect(listing.status == 0)
        let list = try #require(try JSONSerialization.jsonObject(with: Data(listing.stdout.utf8)) as? [[String: Any]])
        #expect(list.count == DiagnosticCode.allCases.count)
        #expect(Set(list.compactMap { $0["code"] as? String }) == Set(DiagnosticCode.allCases.map(\.rawValue)))
        #expect(list.allSatisfy { $0["severity"] is String && $0["summary"] is String && $0["explanation"] is String })
    }

    @Test func anUnknownCodeIsAUsageErrorThatNamesTheNearestCode() throws {
        for arguments in [["explain", "size-limt"], ["explain", "size-limt", "--json"]] {
            let result = try CommandRunner.pkgtool(arguments)
            #expect(result.status == 64, "\(arguments)")
            #expect(result.stdout.isEmpty, "no JSON for a usage error")
            #expect(result.stderr.contains("'size-limt' is not a diagnostic code. Did you mean 'size-limit'?"), "\(result.stderr)")
            #expect(result.stderr.contains("pkgtool explain --help"))
        }
        let far = try CommandRunner.pkgtool(["explain", "everything-is-fine"])
        #expect(far.status == 64)
        #expect(!far.stderr.contains("Did you mean"))
        #expect(far.stderr.contains("'pkgtool explain' lists every code"))
    }
}
