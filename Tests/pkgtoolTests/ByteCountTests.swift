import ArgumentParser
import Foundation
import Testing
import TestSupport
@testable import pkgtool

/// Byte counts (`--max-size`) as coreutils reads them: bytes, or K, M, G and KiB, MiB, GiB
/// (powers of 1024), KB, MB, GB (powers of 1000); anything else is a usage error naming the forms.
@Suite(.offThePool) struct ByteCountTests {
    @Test func unitsAreThePowersTheySay() throws {
        let cases: [(String, Int64)] = [
            ("0", 0), ("1500", 1500), ("1K", 1024), ("1k", 1024), ("1KiB", 1024), ("1KB", 1000), ("1kb", 1000),
            ("3M", 3 << 20), ("3MiB", 3 << 20), ("3MB", 3_000_000), ("2G", 2 << 30), ("2GiB", 2 << 30), ("2GB", 2_000_000_000),
        ]
        for (text, bytes) in cases {
            #expect(try ByteCount.parse(text) == bytes, "\(text)")
        }
    }

    @Test func anythingElseIsRefusedWithTheForms() {
        for text in ["", "abc", "1.5M", "10X", "M", "-5", "5 M", "1KIBB", "1T", "0x10", "9999999999G", "99999999999999999999"] {
            #expect(throws: ValidationError.self, "\(text)") { try ByteCount.parse(text) }
        }
        #expect((try? ByteCount.parse("abc")) == nil)
    }

    /// A package of 1500 payload bytes against each form of the limit, end to end.
    @Test func maxSizeTakesUnitsOnTheCommandLine() throws {
        let scratch = try Scratch()
        let pkg = try scratch.package("p", version: "1.0", text: ["a.txt": String(repeating: "x", count: 1500)])
        for (limit, valid) in [("1500", true), ("1499", false), ("2K", true), ("1K", false), ("2KB", true), ("1KB", false), ("1MB", true)] {
            let result = try CommandRunner.pkgtool(["validate", pkg, "--max-size", limit, "--json"])
            #expect(result.status == (valid ? 0 : 1), "\(limit): \(result.stdout)")
            #expect(valid || codes(result.json) == ["size-limit"], "\(limit): \(result.stdout)")
        }
        let spelt = try CommandRunner.pkgtool(["validate", pkg, "--max-size", "1KiB"])
        #expect(spelt.stderr.contains("limit of 1024 bytes"), "\(spelt.stderr)")
        for wrong in ["abc", "1.5M", "2TB", "0", "0K"] {
            let result = try CommandRunner.pkgtool(["validate", pkg, "--max-size", wrong])
            #expect(result.status == 64, "\(wrong): \(result.stderr)")
            #expect(result.stderr.contains("K, M, G, KiB, MiB, GiB (powers of 1024) or KB, MB, GB (powers of 1000)"), "\(wrong): \(result.stderr)")
        }
        let extract = try CommandRunner.pkgtool(["extract", pkg, "--documents", scratch.path("D"), "--max-size", "1K"])
        #expect(extract.status == 1 && !exists(scratch.path("D/com.example.book/1.0")), "\(extract.stderr)")
    }
}
