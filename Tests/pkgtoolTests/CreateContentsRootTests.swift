import Foundation
import Testing
import TestSupport

/// A source holding `Contents/` is the package root, with or without its ContentInfo.plist
/// (issue 29 item 1): `create` used to pack such a folder as `Contents/Contents/`, and an app
/// then found its files one folder too deep.
@Suite(.offThePool) struct CreateContentsRootTests {
    @Test func contentsWithoutPlistIsThePackageRoot() async throws {
        let scratch = try Scratch()
        try scratch.write("big/Contents/videos/intro.mov", "frames")
        let output = scratch.path("racer.pkg")
        let result = try await CommandRunner.pkgtool(["create", scratch.path("big"), "--product-id", "com.acme.racer.cinematics",
                                                      "--content-version", "1.0", "-o", output])
        #expect(result.status == 0, "\(result.stderr)")
        let listing = try await CommandRunner.shell("bsdtar -tf '\(output)'").stdout.split(separator: "\n").map(String.init)
        #expect(listing == ["ContentInfo.plist", "Contents", "Contents/videos", "Contents/videos/intro.mov"], "\(listing)")
        // Installed where the app looks: Documents/<id>/1.0/videos/..., not .../Contents/videos/...
        let extract = try await CommandRunner.pkgtool(["extract", output, "--documents", scratch.documents])
        #expect(extract.status == 0, "\(extract.stderr)")
        #expect(scratch.text("Documents/com.acme.racer.cinematics/1.0/videos/intro.mov") == "frames")
    }

    @Test func contentsWithAPlistFromElsewhere() async throws {
        let scratch = try Scratch()
        try scratch.write("big/Contents/a.txt", "a")
        try scratch.write("info.plist", plist(id: "com.acme.other", version: "2.0"))
        let output = scratch.path("o.pkg")
        let result = try await CommandRunner.pkgtool(["create", scratch.path("big"), "--plist", scratch.path("info.plist"), "-o", output, "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.json["productIdentifier"] as? String == "com.acme.other")
        let listing = try await CommandRunner.shell("bsdtar -tf '\(output)'").stdout
        #expect(!listing.contains("Contents/Contents"), "\(listing)")
        #expect(listing.contains("Contents/a.txt"))
    }

    @Test func otherEntriesBesideContentsAreOutsideContents() async throws {
        let scratch = try Scratch()
        try scratch.write("big/Contents/a.txt", "a")
        try scratch.write("big/notes.txt", "not content")
        let output = scratch.path("o.pkg")
        let result = try await CommandRunner.pkgtool(["create", scratch.path("big"), "--product-id", "com.acme.x",
                                                      "--content-version", "1.0", "-o", output])
        #expect(result.status == 1)
        #expect(result.stderr.contains("error[outside-contents] notes.txt: "), "\(result.stderr)")
        #expect(result.stderr.contains("holds Contents/, so it is the package root"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: output))
    }

    /// Without a plist or flags, the advice fits the folder: the flags now make a plist beside
    /// Contents/, and following the advice no longer nests the content.
    @Test func contentsWithoutAnyPlistSaysWhatIsMissing() async throws {
        let scratch = try Scratch()
        try scratch.write("big/Contents/a.txt", "a")
        let result = try await CommandRunner.pkgtool(["create", scratch.path("big"), "-o", scratch.path("o.pkg")])
        #expect(result.status == 1)
        #expect(result.stderr.contains("error[missing-content-info]"), "\(result.stderr)")
        #expect(result.stderr.contains("has a Contents/ folder but no ContentInfo.plist beside it"), "\(result.stderr)")
    }

    /// A folder holding one folder that holds the package, as unzipping a Finder zip leaves it,
    /// is read from that folder, as validate reads it.
    @Test func aWrappingFolderOnDiskIsLookedInto() async throws {
        let scratch = try Scratch()
        try scratch.content("unzipped/Desert Pack", id: "com.acme.desert", version: "1.0", files: ["dune.txt": "sand"])
        let output = scratch.path("o.pkg")
        let result = try await CommandRunner.pkgtool(["create", scratch.path("unzipped"), "-o", output, "--json"])
        #expect(result.status == 0, "\(result.stdout)")
        let listing = try await CommandRunner.shell("bsdtar -tf '\(output)'").stdout.split(separator: "\n").map(String.init)
        #expect(listing == ["ContentInfo.plist", "Contents", "Contents/dune.txt"], "\(listing)")
    }
}
