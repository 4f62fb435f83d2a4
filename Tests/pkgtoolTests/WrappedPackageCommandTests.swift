import Foundation
import Testing
import TestSupport

/// One wrapping folder end to end (SPEC section 1, issue 12 item 14): a zip of a content folder
/// made by `zip -r` validates, is named in text and JSON, and installs like the bare layout.
@Suite struct WrappedPackageCommandTests {
    @Test func zipOfAContentFolderValidatesInspectsAndInstalls() async throws {
        let scratch = try Scratch()
        try scratch.content("Chapter One", id: "com.example.wrapped", version: "1.0", files: ["a.txt": "alpha", "art/b.txt": "beta"])
        try await CommandRunner.shell("zip -qr chapter.pkg 'Chapter One'", in: scratch.url)
        let pkg = scratch.path("chapter.pkg")
        let validate = try await CommandRunner.pkgtool(["validate", pkg, "--json"])
        #expect(validate.status == 0, "\(validate.stdout)")
        let package = (validate.json["packages"] as? [[String: Any]])?.first ?? [:]
        #expect(package["wrapper"] as? String == "Chapter One")
        #expect(package["fileCount"] as? Int == 2)
        let text = try await CommandRunner.pkgtool(["validate", pkg])
        #expect(text.stdout.contains("wrapped in Chapter One/"), "\(text.stdout)")
        let inspect = try await CommandRunner.pkgtool(["inspect", pkg, "--json"])
        #expect(inspect.json["wrapper"] as? String == "Chapter One")
        #expect(try await CommandRunner.pkgtool(["inspect", pkg]).stdout.contains("wrapper      Chapter One/"))
        let extract = try await CommandRunner.pkgtool(["extract", pkg, "--documents", scratch.documents, "--json"])
        #expect(extract.status == 0, "\(extract.stdout)")
        #expect(scratch.text("Documents/com.example.wrapped/1.0/art/b.txt") == "beta")
        #expect(readRecord(scratch.documents + "/com.example.wrapped")?.version == "1.0")
        // A bare package has no wrapper: null, not a missing key.
        let bare = try await CommandRunner.pkgtool(["validate", scratch.path("Chapter One"), "--json"])
        #expect((bare.json["packages"] as? [[String: Any]])?.first?["wrapper"] is NSNull)
        #expect(try await CommandRunner.pkgtool(["inspect", scratch.path("Chapter One"), "--json"]).json["wrapper"] is NSNull)
    }
}
