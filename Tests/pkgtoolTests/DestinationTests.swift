import Foundation
import Testing
import TestSupport

/// Where commands write (SPEC section 3, issue 21 item 8): a destination that cannot be written is
/// `io-error`, exit 2, in every command, said once with its path; and every command makes the
/// missing parents of an output path it was given.
@Suite(.offThePool) struct DestinationTests {
    @Test func missingParentsAreMade() async throws {
        let scratch = try Scratch()
        let source = try scratch.content("src", id: "com.example.dest", version: "1.0")
        let created = try await CommandRunner.pkgtool(["create", source, "-o", scratch.path("Out Dir/deeper/x.pkg")])
        #expect(created.status == 0, "\(created.stderr)")
        #expect(exists(scratch.path("Out Dir/deeper/x.pkg")))
        let pkg = scratch.path("Out Dir/deeper/x.pkg")
        let extracted = try await CommandRunner.pkgtool(["extract", pkg, "--documents", scratch.path("new/deep/Documents")])
        #expect(extracted.status == 0, "\(extracted.stderr)")
        #expect(readRecord(scratch.path("new/deep/Documents/com.example.dest"))?.version == "1.0")
        let converted = try await CommandRunner.pkgtool(["convert", pkg, "--to", "background-assets", "--out", scratch.path("packs/deep")])
        #expect(converted.status == 0, "\(converted.stderr)")
        #expect(exists(scratch.path("packs/deep/com-example-dest.json")))
    }

    @Test func aDestinationUnderAFileIsAnIOError() async throws {
        let scratch = try Scratch()
        let source = try scratch.content("src", id: "com.example.dest", version: "1.0")
        let pkg = scratch.path("x.pkg")
        #expect(try await CommandRunner.pkgtool(["create", source, "-o", pkg]).status == 0)
        let blocker = try scratch.write("blocker", "a file")
        let commands: [(String, [String])] = [
            ("create", ["create", source, "-o", blocker + "/x.pkg"]),
            ("create", ["create", source, "-o", blocker + "/sub/x.pkg"]),
            ("extract", ["extract", pkg, "--documents", blocker + "/Documents"]),
            ("convert", ["convert", pkg, "--to", "background-assets", "--out", blocker + "/packs"]),
        ]
        for (name, arguments) in commands {
            let json = try await CommandRunner.pkgtool(arguments + ["--json"])
            #expect(json.status == 2, "\(arguments): \(json.stdout)\(json.stderr)")
            #expect(json.stderr.isEmpty, "\(arguments): \(json.stderr)")
            #expect(codes(json.json).contains("io-error") && !codes(json.json).contains("unreadable-input"), "\(arguments): \(json.stdout)")
            let text = try await CommandRunner.pkgtool(arguments)
            #expect(text.status == 2)
            let line = text.stderr.split(separator: "\n").first.map(String.init) ?? ""
            #expect(line.hasPrefix("error[io-error] \(blocker)"), "\(name): \(text.stderr)")
            // The path is said once.
            #expect(line.components(separatedBy: blocker).count == 2, "\(name): \(line)")
        }
        #expect(scratch.text("blocker") == "a file")
    }
}
