import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Testing
@testable import pkgtool
import TestSupport

/// `validate --reporter github|junit` (issue 29 item 13): findings in the forms CI systems read,
/// on stdout, with the exit status of the text form.
@Suite(.offThePool) struct ValidateReporterTests {
    /// A folder package with executable code (an error) and junk (a warning) whose names need
    /// escaping: `%` in the entry, `,` `:` and a line break in the package's path.
    private func packages(_ scratch: Scratch) throws -> (good: String, bad: String) {
        let good = try scratch.content("good", id: "com.acme.good", version: "1.0")
        let bad = try scratch.content("bad,one:\r\nx", id: "com.acme.bad", version: "1.0", files: ["50%.sh": "#!/bin/sh\n", "a.txt": "a"])
        try scratch.write("bad,one:\r\nx/Contents/.DS_Store", "finder")
        return (good, bad)
    }

    @Test func githubPrintsOneWorkflowCommandPerDiagnosticThenTheSummaries() async throws {
        let scratch = try Scratch()
        let (good, bad) = try packages(scratch)
        let text = try await CommandRunner.pkgtool(["validate", good, bad])
        let result = try await CommandRunner.pkgtool(["validate", good, bad, "--reporter", "github"])
        #expect(result.status == 1 && text.status == 1)
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let file = scratch.path("bad%2Cone%3A%0D%0Ax")
        let error = lines.first { $0.hasPrefix("::error ") }
        #expect(error?.hasPrefix("::error file=\(file),title=executable-code::Contents/50%25.sh: ") == true, "\(lines)")
        let warning = lines.first { $0.hasPrefix("::warning ") }
        #expect(warning?.hasPrefix("::warning file=\(file),title=junk-file::Contents/.DS_Store: ") == true, "\(lines)")
        #expect(lines.filter { $0.hasPrefix("::") }.count == 2, "\(lines)")
        // Then the summary lines, as the text form prints them, and nothing on stderr.
        let summaries = text.stdout.split(separator: "\n").map(String.init)
        #expect(lines.suffix(summaries.count + 1).dropLast() == summaries[...], "\(lines)")
        #expect(!result.stderr.contains("error["), "\(result.stderr)")
        // Quiet: errors only.
        let quiet = try await CommandRunner.pkgtool(["validate", good, bad, "--reporter", "github", "--quiet"])
        #expect(quiet.stdout.split(separator: "\n").map(String.init) == [error ?? "-"], "\(quiet.stdout)")
    }

    @Test func escapingFollowsGitHubsRules() {
        #expect(GitHubAnnotations.data("100% done\r\nnext: a, b") == "100%25 done%0D%0Anext: a, b")
        #expect(GitHubAnnotations.property("a:b,c%\n") == "a%3Ab%2Cc%25%0A")
    }

    @Test func junitIsOneWellFormedDocumentForEveryInput() async throws {
        let scratch = try Scratch()
        let (good, bad) = try packages(scratch)
        let control = try scratch.content("ctl\u{1}name", id: "com.acme.ctl", version: "1.0")
        let missing = scratch.path("missing.pkg")
        let result = try await CommandRunner.pkgtool(["validate", good, bad, control, missing, "--reporter", "junit"])
        #expect(result.status == 2, "\(result.stderr)")
        let document = try XMLDocument(data: Data(result.stdout.utf8))
        let suites = try document.nodes(forXPath: "/testsuites/testsuite").compactMap { $0 as? XMLElement }
        #expect(suites.count == 4)
        #expect(suites.map { $0.attribute(forName: "name")?.stringValue } == [good, bad, scratch.path("ctl\\x01name"), missing])
        func testcase(_ suite: XMLElement, _ code: String) -> XMLElement? {
            suite.elements(forName: "testcase").first { $0.attribute(forName: "name")?.stringValue == code }
        }
        // A test case per rule, passing for the good package.
        let goodCases = suites[0].elements(forName: "testcase")
        #expect(goodCases.count >= 27)
        #expect(goodCases.allSatisfy { $0.elements(forName: "failure").isEmpty })
        // An error is a failure of its rule, a warning that rule's output.
        let code = try #require(testcase(suites[1], "executable-code"))
        #expect(code.elements(forName: "failure").count == 1)
        #expect(code.elements(forName: "failure").first?.attribute(forName: "message")?.stringValue?.hasPrefix("Contents/50%.sh: ") == true)
        let junk = try #require(testcase(suites[1], "junk-file"))
        #expect(junk.elements(forName: "failure").isEmpty)
        #expect(junk.elements(forName: "system-out").first?.stringValue?.contains("warning[junk-file] Contents/.DS_Store") == true)
        #expect(suites[1].attribute(forName: "failures")?.stringValue == "1")
        // The missing package fails on unreadable-input.
        #expect(testcase(suites[3], "unreadable-input")?.elements(forName: "failure").count == 1)
    }

    @Test func aPreviousThatCannotBeReadStillGivesADocument() async throws {
        let scratch = try Scratch()
        let good = try scratch.content("good", id: "com.acme.good", version: "1.0")
        let result = try await CommandRunner.pkgtool(["validate", good, "--previous", scratch.path("gone.pkg"), "--reporter", "junit"])
        #expect(result.status == 2, "\(result.stderr)")
        let document = try XMLDocument(data: Data(result.stdout.utf8))
        let failures = try document.nodes(forXPath: "//testcase[@name='unreadable-input']/failure")
        #expect(failures.count == 1, "\(result.stdout)")
        #expect(try document.nodes(forXPath: "//testcase/skipped").count > 0)
    }

    @Test func withJSONAReporterIsUsage() async throws {
        let scratch = try Scratch()
        let good = try scratch.content("good")
        for arguments in [["validate", good, "--reporter", "junit", "--json"], ["--json", "validate", good, "--reporter", "github"]] {
            let result = try await CommandRunner.pkgtool(arguments)
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
            #expect(result.stdout.isEmpty)
        }
        #expect(try await CommandRunner.pkgtool(["validate", good, "--reporter", "text", "--json"]).status == 0)
        #expect(try await CommandRunner.pkgtool(["validate", good, "--reporter", "junit"]).status == 0)
    }
}
