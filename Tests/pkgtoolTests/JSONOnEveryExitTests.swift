import Foundation
import Testing
import TestSupport

/// `--json` prints its one document whichever way a command ends, exit 2 included, with the
/// failure as a diagnostic; validate lists every path it was given (issue 12, item 1).
@Suite(.offThePool) struct JSONOnEveryExitTests {
    /// Runs `arguments`, expecting one JSON object on stdout and nothing on stderr.
    static func json(_ arguments: [String], status: Int32) async throws -> [String: Any] {
        let result = try await CommandRunner.pkgtool(arguments)
        #expect(result.status == status, "\(arguments): \(result.stderr)")
        #expect(result.stderr.isEmpty, "\(arguments): \(result.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        return try #require(object, "\(arguments): \(result.stdout)")
    }

    static func onlyDiagnostic(_ diagnostics: Any?) -> String? {
        let list = diagnostics as? [[String: Any]] ?? []
        return list.count == 1 ? list[0]["code"] as? String : nil
    }

    @Test func validateListsAMissingPathAsInvalid() async throws {
        let scratch = try Scratch()
        let good = try scratch.content("good")
        let missing = scratch.path("nothere.pkg")
        let one = try await Self.json(["validate", "--json", missing], status: 2)
        #expect(one["valid"] as? Bool == false)
        let only = (one["packages"] as? [[String: Any]]) ?? []
        #expect(only.count == 1)
        #expect(only.first?["path"] as? String == missing)
        #expect(only.first?["valid"] as? Bool == false)
        #expect(Self.onlyDiagnostic(only.first?["diagnostics"]) == "unreadable-input")
        // Several paths: every one listed, in order.
        let several = try await Self.json(["validate", good, missing, good, "--json"], status: 2)
        let packages = several["packages"] as? [[String: Any]] ?? []
        #expect(packages.map { $0["path"] as? String } == [good, missing, good])
        #expect(packages.map { $0["valid"] as? Bool } == [true, false, true])
        #expect(several["valid"] as? Bool == false)
        // Text says so too, on stderr.
        let text = try await CommandRunner.pkgtool(["validate", missing])
        #expect(text.stderr.hasPrefix("error[unreadable-input] \(missing): "), "\(text.stderr)")
    }

    @Test func validateWithAnUnreadablePreviousStillListsEveryPath() async throws {
        let scratch = try Scratch()
        let good = try scratch.content("good")
        let json = try await Self.json(["validate", good, "--previous", scratch.path("old.pkg"), "--json"], status: 2)
        #expect(json["valid"] as? Bool == false)
        #expect((json["packages"] as? [[String: Any]])?.map { $0["path"] as? String } == [good])
        #expect(Self.onlyDiagnostic(json["diagnostics"]) == "unreadable-input")
    }

    @Test func createExtractInspectAndDiffPrintTheirDocumentOnExitTwo() async throws {
        let scratch = try Scratch()
        let missing = scratch.path("nothere")
        let create = try await Self.json(["create", missing, "-o", scratch.path("o.pkg"), "--json"], status: 2)
        #expect(create["output"] is NSNull)
        #expect(Self.onlyDiagnostic(create["diagnostics"]) == "unreadable-input")
        let extract = try await Self.json(["extract", missing, "--documents", scratch.documents, "--json"], status: 2)
        #expect(extract["status"] as? String == "failed")
        #expect(extract["installedPath"] is NSNull)
        #expect(Self.onlyDiagnostic(extract["diagnostics"]) == "unreadable-input")
        let inspect = try await Self.json(["inspect", missing, "--json"], status: 2)
        #expect(inspect["path"] as? String == missing)
        #expect(Self.onlyDiagnostic(inspect["diagnostics"]) == "unreadable-input")
        let good = try scratch.content("good")
        let diff = try await Self.json(["diff", missing, good, "--json"], status: 2)
        #expect(diff["verdict"] as? String == "invalid")
        #expect(Self.onlyDiagnostic((diff["old"] as? [String: Any])?["diagnostics"]) == "unreadable-input")
        #expect((diff["new"] as? [String: Any])?["productIdentifier"] as? String == "com.example.test")
    }

    @Test func extractThatCannotWriteReportsAnIOError() async throws {
        let scratch = try Scratch()
        let pkg = try scratch.package("one", version: "1.0", text: ["a.txt": "1"])
        try FileManager.default.createDirectory(atPath: scratch.documents, withIntermediateDirectories: true)
        try Data("not a folder".utf8).write(to: URL(fileURLWithPath: scratch.documents + "/com.example.book"))
        let json = try await Self.json(["extract", pkg, "--documents", scratch.documents, "--json"], status: 2)
        #expect(json["status"] as? String == "failed")
        #expect(Self.onlyDiagnostic(json["diagnostics"]) == "io-error")
    }
}
