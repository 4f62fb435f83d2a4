import Foundation
import Testing
import TestSupport

/// Comments in Sources/ say why the code is as it is, not how it got there: no commit hashes, no
/// timings from a measurement ("0.24 -> 0.19 s", "1.52 against 1.37 s, medians of four runs"),
/// no measured rates or speed-ups ("2.5 ms per MiB", "380 MB/s", "3x faster").
/// Such history goes stale with the next change; it belongs in commit messages and bench/.
@Suite struct CommentHistoryTests {
    /// Every Swift file under Sources/, by its path from the package root.
    static func sourceFiles() throws -> [String] {
        let root = CommandRunner.packageRoot.path
        let enumerator = try #require(FileManager.default.enumerator(atPath: root + "/Sources"))
        return enumerator.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }.sorted().map { "Sources/" + $0 }
    }

    @Test func sourcesHoldNoHistoryInComments() throws {
        let files = try Self.sourceFiles()
        try #require(files.count > 50, "found only \(files)")
        var findings: [String] = []
        for file in files {
            let text = try String(contentsOfFile: CommandRunner.packageRoot.path + "/" + file, encoding: .utf8)
            findings += CommentHistory.findings(in: text).map { "\(file):\($0.line): \($0.reason): \($0.text)" }
        }
        #expect(findings.isEmpty, "history in comments (keep the why, move the numbers to the commit message):\n\(findings.joined(separator: "\n"))")
    }

    /// Each kind of history is caught, across the lines of one comment, and what only looks like
    /// it is not.
    @Test func historyIsFoundAndLookalikesAreNot() {
        let planted = """
            /// A lead of 16 MiB: a full sync takes 0.10 s less than with 32 (1.52 against
            /// 1.37 s, medians of four runs side by side).
            let lead = 16
            // The table is sized once: 0.24 -> 0.19 s on the benchmark.

            // Since 439bf9b the TOC is read once.
            let size = 3 // measured at 2.5 ms per MiB
            /// A fresh page costs about 2.5 ms per MiB.
            let step = 4
            // The engine reads 380 MB/s.
            let engine = 5
            // ISA-L is 3x faster,
            // or 4 times faster.
            """
        let found = CommentHistory.findings(in: planted)
        #expect(found.map(\.line) == [1, 4, 6, 7, 8, 10, 12], "\(found)")
        #expect(found.map(\.reason) == ["a measured timing", "a measured timing", "a commit hash", "a measured timing",
                                        "a measured rate", "a measured rate", "a measured rate"])

        let lookalikes = #"""
            /// Ed25519 keys, as `openssl genpkey -algorithm ed25519` writes them.
            let a = 1
            /// `update com.x 1.0 -> 1.1 (delta, 1.7 MB to download)`.
            let b = 2
            /// Retries wait 0.5, 1 and 2 s; the default time-out is 30 s.
            let c = 3 // the clock time-outs are measured on
            /// Sizes like 1000000 and words like deadbeef pass, and so do "several times faster",
            /// "a 1 MiB change", "30 s per attempt" and "MB/s" without a number.
            let url = "https://example.com/a//b 0.2 -> 0.1 s"
            let text = """
                // 0.24 -> 0.19 s, inside a string
                """
            """#
        #expect(CommentHistory.findings(in: lookalikes).isEmpty, "\(CommentHistory.findings(in: lookalikes))")
    }
}

/// Finds history in the comments of one Swift source.
enum CommentHistory {
    struct Finding: CustomStringConvertible {
        /// The first line of the comment that holds it (1-based).
        var line: Int
        var reason: String
        var text: String
        var description: String { "\(line): \(reason): \(text)" }
    }

    /// A duration: a number and a unit of time.
    private static let duration = #"\d+(\.\d+)?\s?(s|ms|µs|us|ns|seconds?|minutes?)\b"#
    /// Two timings side by side: "0.24 -> 0.19 s", "1.52 against 1.37 s".
    private static let comparison = try! NSRegularExpression(
        pattern: #"\d+(\.\d+)?\s?(s|ms|µs|us|seconds?)?\s*(->|→|=>|against|vs\.?|versus)\s*"# + duration)
    /// Words that say a number was measured; history when a duration is in the same comment.
    private static let measuring = try! NSRegularExpression(pattern: #"\b(measured|medians?|benchmarked|timed at)\b"#, options: .caseInsensitive)
    private static let anyDuration = try! NSRegularExpression(pattern: duration)
    /// A measured rate or speed-up: "2.5 ms per MiB", "380 MB/s", "3x faster", "4 times faster".
    private static let rate = try! NSRegularExpression(
        pattern: #"\d+(\.\d+)?\s?(ms|µs|us|ns)\s+per\b|\d+(\.\d+)?\s?[KMGT]i?B/s\b|\d+(\.\d+)?\s?(x|×|times)\s+(faster|slower|smaller|larger)\b"#,
        options: .caseInsensitive)
    /// What a shortened or full commit hash looks like: 7 to 40 lowercase hex digits, with both
    /// letters and digits (so neither a plain number nor a word such as "deadbeef").
    private static let hash = try! NSRegularExpression(pattern: #"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b"#)
    /// Names that look like hashes.
    private static let notHashes: Set<String> = ["ed25519"]

    /// Every finding, one per kind per comment; a comment is a run of lines that hold `//`
    /// comments, read as one text (a timing may be split across its lines).
    static func findings(in source: String) -> [Finding] {
        var found: [Finding] = []
        var comment: (line: Int, text: String)?
        func check() {
            guard let (line, text) = comment else { return }
            comment = nil
            if matches(comparison, text) || (matches(measuring, text) && matches(anyDuration, text)) {
                found.append(Finding(line: line, reason: "a measured timing", text: text))
            } else if matches(rate, text) {
                found.append(Finding(line: line, reason: "a measured rate", text: text))
            }
            let range = NSRange(text.startIndex..., in: text)
            let hashes = hash.matches(in: text, range: range).compactMap { Range($0.range, in: text).map { String(text[$0]) } }
            if hashes.contains(where: { !notHashes.contains($0) }) {
                found.append(Finding(line: line, reason: "a commit hash", text: text))
            }
        }
        var inMultilineString = false
        for (index, line) in source.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let delimiters = line.components(separatedBy: "\"\"\"").count - 1
            if inMultilineString {
                if delimiters % 2 == 1 { inMultilineString = false }
                continue
            }
            if delimiters % 2 == 1 { inMultilineString = true }
            guard let text = commentText(String(line)) else {
                check()
                continue
            }
            if line.trimmingCharacters(in: .whitespaces).hasPrefix("//") {
                comment = comment.map { ($0.line, $0.text + " " + text) } ?? (index + 1, text)
            } else {
                // A comment after code is one of its own.
                check()
                comment = (index + 1, text)
                check()
            }
        }
        check()
        return found
    }

    /// The text after a line's `//`, if it has one outside a string literal.
    private static func commentText(_ line: String) -> String? {
        var inString = false
        var previous: Character = " "
        var index = line.startIndex
        while index < line.endIndex {
            let character = line[index]
            if character == "\"" && previous != "\\" { inString.toggle() }
            let next = line.index(after: index)
            if !inString, character == "/", next < line.endIndex, line[next] == "/" {
                return String(line[next...].drop { $0 == "/" }).trimmingCharacters(in: .whitespaces)
            }
            previous = character
            index = next
        }
        return nil
    }

    private static func matches(_ expression: NSRegularExpression, _ text: String) -> Bool {
        expression.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
    }
}
