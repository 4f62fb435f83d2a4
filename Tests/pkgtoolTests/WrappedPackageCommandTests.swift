import Foundation
import Testing
import TestSupport

/// One wrapping folder end to end (SPEC section 1, issue 12 item 14): a zip of a content folder
/// made by `zip -r` validates, is named in text and JSON, and installs like the bare layout.
@Suite(.offThePool) struct WrappedPackageCommandTests {
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

    /// A zip as Finder's "Compress" makes it: the content folder and, beside it, `__MACOSX/` with
    /// AppleDouble files. The wrapper is recognised, `__MACOSX` is one junk-file warning at most,
    /// and nothing of it is installed (issue 21, item 2: it was missing-content-info).
    @Test func finderZipWithItsMacOSXFolder() async throws {
        let scratch = try Scratch()
        try scratch.content("MyLevels", id: "com.example.levels", version: "1.0", files: ["world1.dat": "w1", "art/sky.png": "sky"])
        try scratch.write("__MACOSX/MyLevels/._ContentInfo.plist", "apple double")
        try scratch.write("__MACOSX/MyLevels/Contents/._world1.dat", "apple double")
        try scratch.write("__MACOSX/MyLevels/Contents/art/._sky.png", "apple double")
        // Finder lists the AppleDouble folder first as often as last: both orders.
        for (name, order) in [("last.zip", "MyLevels __MACOSX"), ("first.zip", "__MACOSX MyLevels")] {
            try await CommandRunner.shell("zip -qr \(name) \(order)", in: scratch.url)
            let pkg = scratch.path(name)
            let validate = try await CommandRunner.pkgtool(["validate", pkg, "--json"])
            let package = (validate.json["packages"] as? [[String: Any]])?.first ?? [:]
            #expect(package["wrapper"] as? String == "MyLevels", "\(name): \(validate.stdout)")
            #expect(package["fileCount"] as? Int == 2, "\(name)")
            let diagnostics = package["diagnostics"] as? [[String: Any]] ?? []
            // Only bad-extension (a .zip) and at most one junk-file warning.
            #expect(Set(diagnostics.compactMap { $0["code"] as? String }).isSubset(of: ["bad-extension", "junk-file"]), "\(name): \(diagnostics)")
            #expect(diagnostics.filter { $0["code"] as? String == "junk-file" }.count <= 1, "\(name): \(diagnostics)")
            let inspect = try await CommandRunner.pkgtool(["inspect", pkg, "--json"])
            #expect(inspect.status == 0, "\(name): \(inspect.stdout)")
            #expect(inspect.json["wrapper"] as? String == "MyLevels")
            let documents = scratch.path("Documents-\(name)")
            let extract = try await CommandRunner.pkgtool(["extract", pkg, "--documents", documents, "--json"])
            #expect(extract.status == 0, "\(name): \(extract.stdout)")
            #expect(snapshot(documents + "/com.example.levels/1.0") == snapshot(scratch.path("MyLevels/Contents")), "\(name)")
            #expect(names(documents + "/com.example.levels") == [".lock", "1.0", "ContentInfo.plist"], "\(name)")
        }
    }
}
