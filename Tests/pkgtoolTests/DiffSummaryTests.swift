import Foundation
import Testing
import TestSupport

/// `diff` says its verdict first and ends a comparison with what it adds up to (issue 29 item
/// 10): two products used to print every file before `product-identifier-mismatch`.
@Suite(.offThePool) struct DiffSummaryTests {
    @Test func theVerdictComesFirstAndTheSummaryLast() async throws {
        let scratch = try Scratch()
        try scratch.content("v1", id: "com.acme.d", version: "1.0", files: ["same.txt": "same", "changed.txt": "old", "gone.txt": "bye!"])
        try scratch.content("v2", id: "com.acme.d", version: "1.1", files: ["same.txt": "same", "changed.txt": "newer", "added.txt": "hello", "more.txt": "123"])
        let result = try await CommandRunner.pkgtool(["diff", scratch.path("v1"), scratch.path("v2")])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "verdict: ok", "\(lines)")
        #expect(lines.contains("+ added.txt") && lines.contains("- gone.txt") && lines.contains("~ changed.txt"), "\(lines)")
        #expect(lines.last == "2 files added (8 bytes), 1 removed (4 bytes), 1 changed (5 bytes now)", "\(lines)")
        let json = try await CommandRunner.pkgtool(["diff", scratch.path("v1"), scratch.path("v2"), "--json"]).json
        #expect(json["addedBytes"] as? Int == 8)
        #expect(json["removedBytes"] as? Int == 4)
        #expect(json["changedBytes"] as? Int == 5)
        // The keys scripts already read stay.
        for key in ["old", "new", "added", "removed", "changed", "verdict"] { #expect(json.keys.contains(key), "\(key)") }
    }

    @Test func twoProductsSayMismatchBeforeAnyFile() async throws {
        let scratch = try Scratch()
        var many: [String: String] = [:]
        for index in 0..<50 { many["file\(index).txt"] = "\(index)" }
        try scratch.content("a", id: "com.acme.racer", version: "1.0", files: many)
        try scratch.content("b", id: "com.acme.other", version: "1.0", files: ["x.txt": "x"])
        let result = try await CommandRunner.pkgtool(["diff", scratch.path("a"), scratch.path("b")])
        #expect(result.status == 1)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "verdict: product-identifier-mismatch", "\(lines.prefix(3))")
        #expect(lines.last?.hasPrefix("1 file added (1 byte), 50 removed") == true, "\(lines.suffix(2))")
    }
}
