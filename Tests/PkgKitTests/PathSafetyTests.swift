import Testing
@testable import PkgKit

/// `unsafe-path`'s judgement of raw archive paths, one case per reason.
@Suite struct PathSafetyTests {
    /// One raw path and the problem it must have (nil: none).
    struct Case: CustomTestStringConvertible, Sendable {
        var path: String
        var problem: String?

        /// The path with its control characters escaped: a raw newline in a test's name breaks
        /// the runner's one-line-per-test output.
        var testDescription: String {
            let shown = path.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "\\u{\(String($0.value, radix: 16))}" : String($0) }.joined()
            return "\(shown.count > 60 ? String(shown.prefix(60)) + "…" : shown) → \(problem ?? "safe")"
        }
    }

    static let cases: [Case] = [
        Case(path: "Contents/a.txt", problem: nil),
        Case(path: "./Contents/a.txt", problem: nil),
        Case(path: "Contents/dir/", problem: nil),
        Case(path: "Contents/caf\u{E9}/\u{1F600}.png", problem: nil),
        Case(path: "Contents/a..b/.hidden", problem: nil),
        Case(path: "/etc/passwd", problem: "absolute path"),
        Case(path: "Contents//a.txt", problem: "empty component"),
        Case(path: "Contents/../a.txt", problem: "'..'"),
        Case(path: "..", problem: "'..'"),
        Case(path: "Contents/./a.txt", problem: "'.' component"),
        Case(path: "Contents/a\u{7F}b", problem: "control character 0x7f"),
        Case(path: "Contents/a\nb\u{1}", problem: "control character 0xa"),
        Case(path: "Contents/" + String(repeating: "n", count: 256), problem: "256 bytes long"),
    ]

    @Test(arguments: cases)
    func textPaths(_ test: Case) {
        let found = PathSafety.problem(with: Array(test.path.utf8))
        if let problem = test.problem {
            #expect(found?.contains(problem) == true, "\(test): \(found ?? "nil")")
        } else {
            #expect(found == nil, "\(test): \(found ?? "nil")")
        }
    }

    /// Every case's name fits on the one line the test runner prints it on.
    @Test func caseNamesAreOneLine() {
        for test in Self.cases {
            let oneLine = !test.testDescription.contains { $0.isNewline }
            #expect(oneLine, "\(test.path.debugDescription)")
        }
    }

    @Test func bytesThatAreNotText() {
        // A NUL is named before any other control character in the same path.
        #expect(PathSafety.problem(with: Array("Contents/a\u{1}b".utf8) + [0])?.contains("NUL") == true)
        #expect(PathSafety.problem(with: Array("Contents/".utf8) + [0xC3, 0x28])?.contains("not valid UTF-8") == true)
        #expect(PathSafety.problem(with: Array("Contents/".utf8) + [0xFF])?.contains("not valid UTF-8") == true)
        #expect(PathSafety.problem(with: Array(repeating: UInt8(ascii: "a"), count: PackageLimits.maxPathBytes + 1))?.contains("keep paths within") == true)
    }

    /// What an install checks again of every path it writes, whatever the rules said: a name in
    /// every component, so that nothing is written beside or above the staging folder.
    @Test(arguments: [
        ("a.txt", true), ("dir/a.txt", true), ("a..b/.hidden/...", true), (".x", true),
        ("", false), ("/a", false), ("a/", false), ("a//b", false), (".", false), ("..", false),
        ("a/../b", false), ("a/./b", false), ("../a", false), ("a/..", false),
    ])
    func anInstallWritesOnlyPathsOfNames(_ path: String, _ safe: Bool) {
        #expect(PathSafety.componentsAreNames(path) == safe)
    }
}
