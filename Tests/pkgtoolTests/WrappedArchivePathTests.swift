import Foundation
import Testing
import TestSupport

/// Diagnostics of a package wrapped in one folder name each entry as it is in the archive, so
/// that a user can find it there (issue 29 item 12): a Finder zip's junk was `.DS_Store`, not
/// `Desert Pack/.DS_Store`. JSON keeps `path` relative to the package root and adds `archivePath`.
@Suite(.offThePool) struct WrappedArchivePathTests {
    @Test func textNamesTheEntryInTheArchive() async throws {
        let scratch = try Scratch()
        try scratch.content("Desert Pack", id: "com.acme.desert", version: "1.0", files: ["sand.txt": "sand"])
        try scratch.write("Desert Pack/.DS_Store", "finder")
        try scratch.write("Desert Pack/notes.txt", "stray")
        try await CommandRunner.shell("zip -qr desert.pkg 'Desert Pack'", in: scratch.url)
        let pkg = scratch.path("desert.pkg")
        let text = try await CommandRunner.pkgtool(["validate", pkg])
        #expect(text.status == 1)
        #expect(text.stderr.contains("warning[junk-file] Desert Pack/.DS_Store: "), "\(text.stderr)")
        #expect(text.stderr.contains("error[outside-contents] Desert Pack/notes.txt: "), "\(text.stderr)")
        let json = try await CommandRunner.pkgtool(["validate", pkg, "--json"])
        let diagnostics = (json.json["packages"] as? [[String: Any]])?.first?["diagnostics"] as? [[String: Any]] ?? []
        let junk = diagnostics.first { $0["code"] as? String == "junk-file" }
        #expect(junk?["path"] as? String == ".DS_Store", "\(diagnostics)")
        #expect(junk?["archivePath"] as? String == "Desert Pack/.DS_Store", "\(diagnostics)")
        // A bare package's diagnostics have no archivePath key at all.
        try FileManager.default.removeItem(atPath: scratch.path("Desert Pack/notes.txt"))
        let bare = try await CommandRunner.pkgtool(["validate", scratch.path("Desert Pack"), "--json"])
        let bareDiagnostics = (bare.json["packages"] as? [[String: Any]])?.first?["diagnostics"] as? [[String: Any]] ?? []
        #expect(!bareDiagnostics.isEmpty && bareDiagnostics.allSatisfy { $0["archivePath"] == nil }, "\(bare.stdout)")
        // extract says it the same way.
        let extract = try await CommandRunner.pkgtool(["extract", pkg, "--documents", scratch.documents])
        #expect(extract.stderr.contains("Desert Pack/notes.txt"), "\(extract.stderr)")
    }
}
