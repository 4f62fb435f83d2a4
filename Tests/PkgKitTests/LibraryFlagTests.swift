import Foundation
import PkgKit
import Testing
import TestSupport

/// PkgKit names no command-line flag: an app that embeds it shows its messages as they are, and
/// a flag there would be advice the app's user cannot follow. Advice is a typed hint that each
/// program words (issue 30, item 5).
@Suite struct LibraryFlagTests {
    static let root = CommandRunner.packageRoot.path
    /// True when `text` holds `--` and a letter, not inside a longer run of dashes (a PEM
    /// armour line).
    static func namesAFlag(_ text: String) -> Bool {
        text.contains(#/(?:^|[^-\w])--[A-Za-z]/#)
    }

    /// Every string literal in PkgKit's and PkgKitArchive's sources, with where it is.
    static func literals() throws -> [(file: String, text: String)] {
        var found: [(String, String)] = []
        for module in ["Sources/PkgKit", "Sources/PkgKitArchive"] {
            let folder = root + "/" + module
            let enumerator = FileManager.default.enumerator(atPath: folder)
            while let path = enumerator?.nextObject() as? String {
                guard path.hasSuffix(".swift") else { continue }
                let text = try String(contentsOfFile: folder + "/" + path, encoding: .utf8)
                found += StringLiterals.in(text).map { (module + "/" + path, $0) }
            }
        }
        return found
    }

    @Test func noStringLiteralNamesAFlag() throws {
        let literals = try Self.literals()
        #expect(literals.count > 500, "the scan found too few literals to be reading the sources")
        let offenders = literals.filter { Self.namesAFlag($0.text) }.map { "\($0.file): \($0.text)" }
        #expect(offenders.isEmpty, "\(offenders.joined(separator: "\n"))")
    }

    /// The scan finds a flag where one is, and not in comments or a PEM armour line.
    @Test func scanFindsFlagsInLiteralsOnly() {
        let source = #"""
            // pass --force
            /// `--no-delta`
            let a = "raise --max-size"
            let b = "-----BEGIN KEY-----"
            let c = """
                run it with --json
                """
            let d = "\(x ? "--keep" : "")"
            let e = #"say "--now""#
            """#
        let found = StringLiterals.in(source)
        #expect(found.filter(Self.namesAFlag).count == 4, "\(found)")
        #expect(!found.contains { $0.contains("force") || $0.contains("no-delta") })
    }

    /// A message's hints in PkgKit's words, in a program's, and in JSON as the encoder says.
    @Test func hintsAreWordedByTheProgramThatShowsThem() throws {
        var diagnostic = Diagnostic(.sizeLimit, path: "a", words: "too big: split it or \(hint: .raiseSizeLimit) (\(3) parts)")
        #expect(diagnostic.message == "too big: split it or raise the size limit (3 parts)")
        #expect(diagnostic.words.hints == [.raiseSizeLimit])
        let flags = DiagnosticWording { $0 == .raiseSizeLimit ? "raise LIMIT" : nil }
        #expect(diagnostic.message(in: flags) == "too big: split it or raise LIMIT (3 parts)")
        let encoder = JSONEncoder()
        encoder.userInfo[DiagnosticWording.userInfoKey] = flags
        let json = try #require(JSONSerialization.jsonObject(with: encoder.encode(diagnostic)) as? [String: Any])
        #expect(json["message"] as? String == "too big: split it or raise LIMIT (3 parts)")
        #expect(Set(json.keys) == ["code", "severity", "path", "message"])
        let plain = try JSONDecoder().decode(Diagnostic.self, from: JSONEncoder().encode(diagnostic))
        #expect(plain.message == diagnostic.message && plain.path == "a" && plain.code == .sizeLimit)
        diagnostic.words.append(": nothing was written")
        #expect(diagnostic.message(in: flags) == "too big: split it or raise LIMIT (3 parts): nothing was written")
    }
}

/// The string literals of Swift source text: single-line, multi-line and raw, an interpolation's
/// code (and the literals nested in it) read as part of its literal; comments skipped.
enum StringLiterals {
    static func `in`(_ source: String) -> [String] {
        let chars = Array(source)
        var literals: [String] = []
        var i = 0
        func at(_ index: Int) -> Character? { index < chars.count ? chars[index] : nil }
        while i < chars.count {
            if chars[i] == "/", at(i + 1) == "/" {
                while i < chars.count, chars[i] != "\n" { i += 1 }
            } else if chars[i] == "/", at(i + 1) == "*" {
                i += 2
                while i < chars.count, !(chars[i] == "*" && at(i + 1) == "/") { i += 1 }
                i += 2
            } else if chars[i] == "#", let end = rawLiteralEnd(chars, from: i) {
                // A raw literal (`#"…"#`): no escapes, no interpolation to follow.
                literals.append(String(chars[i..<end.text]))
                i = end.next
            } else if chars[i] == "\"" {
                var text = ""
                i = literal(chars, from: i, into: &text)
                literals.append(text)
            } else {
                i += 1
            }
        }
        return literals
    }

    /// Where the raw literal opening at `start` (`#` signs, then quotes) ends: the end of its
    /// text and the index after its closing delimiter; nil when no raw literal opens there.
    private static func rawLiteralEnd(_ chars: [Character], from start: Int) -> (text: Int, next: Int)? {
        var i = start
        while i < chars.count, chars[i] == "#" { i += 1 }
        guard i < chars.count, chars[i] == "\"" else { return nil }
        let closing = Array("\"" + String(repeating: "#", count: i - start))
        var j = i + 1
        while j + closing.count <= chars.count {
            if Array(chars[j..<(j + closing.count)]) == closing { return (j, j + closing.count) }
            j += 1
        }
        return (chars.count, chars.count)
    }

    /// Reads the literal opening at `start` into `text`; returns the index after it.
    private static func literal(_ chars: [Character], from start: Int, into text: inout String) -> Int {
        func at(_ index: Int) -> Character? { index < chars.count ? chars[index] : nil }
        let triple = at(start + 1) == "\"" && at(start + 2) == "\""
        var i = start + (triple ? 3 : 1)
        while i < chars.count {
            let c = chars[i]
            if c == "\\", at(i + 1) == "(" {
                // An interpolation: its code up to the closing parenthesis, nested literals too.
                var depth = 0
                i += 1
                repeat {
                    if chars[i] == "\"" { i = literal(chars, from: i, into: &text); continue }
                    if chars[i] == "(" { depth += 1 }
                    if chars[i] == ")" { depth -= 1 }
                    text.append(chars[i])
                    i += 1
                } while i < chars.count && depth > 0
                continue
            }
            if c == "\\" { text.append(c); if let next = at(i + 1) { text.append(next) }; i += 2; continue }
            if c == "\"", !triple || (at(i + 1) == "\"" && at(i + 2) == "\"") { return i + (triple ? 3 : 1) }
            if c == "\n", !triple { return i }
            text.append(c)
            i += 1
        }
        return i
    }
}
