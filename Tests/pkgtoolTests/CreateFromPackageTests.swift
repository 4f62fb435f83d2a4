import Foundation
import Testing
import TestSupport

/// `create` takes any package the readers take as its source and writes the canonical .pkg
/// from it (issue 29 item 2): a zip as Finder makes it, a tar, a .pkg, wrapped or not.
@Suite(.offThePool) struct CreateFromPackageTests {
    /// Finder's "Compress": the folder, `.DS_Store` junk, and `__MACOSX/` beside it.
    private func finderZip(_ scratch: Scratch) async throws -> String {
        try scratch.content("Desert Pack", id: "com.acme.desert", version: "1.0", files: ["dunes/sand.txt": "sand", "sky.txt": "blue"])
        try scratch.write("Desert Pack/.DS_Store", "finder")
        try scratch.write("__MACOSX/Desert Pack/._ContentInfo.plist", "apple double")
        try await CommandRunner.shell("zip -qr 'Desert Pack.zip' 'Desert Pack' __MACOSX", in: scratch.url)
        return scratch.path("Desert Pack.zip")
    }

    @Test func aFinderZipBecomesTheCanonicalPackage() async throws {
        let scratch = try Scratch()
        let zip = try await finderZip(scratch)
        let output = scratch.path("out/desert.pkg")
        let result = try await CommandRunner.pkgtool(["create", zip, "-o", output, "--json"])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.json["productIdentifier"] as? String == "com.acme.desert")
        #expect(result.json["fileCount"] as? Int == 2)
        #expect(try scratch.read("out/desert.pkg").prefix(4) == Data("xar!".utf8))
        let listing = try await CommandRunner.shell("bsdtar -tf '\(output)'").stdout.split(separator: "\n").map(String.init)
        #expect(listing == ["ContentInfo.plist", "Contents", "Contents/dunes", "Contents/dunes/sand.txt", "Contents/sky.txt"], "\(listing)")
        // The junk is named as the archive has it, and left out.
        let skipped = result.json["skipped"] as? [String] ?? []
        #expect(skipped.contains(".DS_Store"), "\(skipped)")
        // It validates as a .pkg, and the unpacked copy it was built from is gone.
        #expect(try await CommandRunner.pkgtool(["validate", output]).status == 0)
        #expect(scratch.list("out") == ["desert.pkg"])
        let text = try await CommandRunner.pkgtool(["create", zip, "-o", scratch.path("again.pkg")])
        #expect(text.stderr.contains("warning[junk-file] Desert Pack/.DS_Store: file-system or version-control litter: left out of the package"), "\(text.stderr)")
        #expect(try scratch.read("again.pkg") == scratch.read("out/desert.pkg"))
    }

    /// A package rebuilt from itself is the same bytes: create is reproducible from any source.
    @Test func aPackageAndATarRebuildToTheSameBytes() async throws {
        let scratch = try Scratch()
        let source = try scratch.content("src", id: "com.acme.same", version: "2.1", files: ["a.txt": "alpha", "b/c.txt": "gamma"])
        let original = scratch.path("original.pkg")
        #expect(try await CommandRunner.pkgtool(["create", source, "-o", original]).status == 0)
        let rebuilt = try await CommandRunner.pkgtool(["create", original, "-o", scratch.path("rebuilt.pkg")])
        #expect(rebuilt.status == 0, "\(rebuilt.stderr)")
        #expect(try scratch.read("rebuilt.pkg") == scratch.read("original.pkg"))
        try await CommandRunner.shell("bsdtar -cf src.tar -C src ContentInfo.plist Contents", in: scratch.url)
        let fromTar = try await CommandRunner.pkgtool(["create", scratch.path("src.tar"), "-o", scratch.path("tar.pkg")])
        #expect(fromTar.status == 0, "\(fromTar.stderr)")
        #expect(try scratch.read("tar.pkg") == scratch.read("original.pkg"))
    }

    /// A productbuild installer package whose Payload wraps the content in a folder.
    @Test func anInstallerPackageBecomesAContentPackage() async throws {
        let scratch = try Scratch()
        try scratch.content("payload/MyContent", id: "com.acme.installer", version: "1.2", files: ["a.txt": "alpha"])
        try scratch.write("flat/Distribution", "<installer-gui-script minSpecVersion=\"1\"/>")
        try scratch.write("flat/comp.pkg/PackageInfo", "<pkg-info/>")
        try await CommandRunner.shell("cd payload && find . | sort | bsdtar --format odc -n -cf - -T - | gzip -n > ../flat/comp.pkg/Payload && cd ../flat && bsdtar --format xar -cf ../installer.pkg Distribution comp.pkg", in: scratch.url)
        let result = try await CommandRunner.pkgtool(["create", scratch.path("installer.pkg"), "-o", scratch.path("content.pkg"), "--json"])
        #expect(result.status == 0, "\(result.stdout)")
        let listing = try await CommandRunner.shell("bsdtar -tf content.pkg", in: scratch.url).stdout.split(separator: "\n").map(String.init)
        #expect(listing == ["ContentInfo.plist", "Contents", "Contents/a.txt"], "\(listing)")
        let inspect = try await CommandRunner.pkgtool(["inspect", scratch.path("content.pkg"), "--json"])
        #expect(inspect.json["format"] as? String == "xar")
        #expect(inspect.json["productIdentifier"] as? String == "com.acme.installer")
    }

    /// The flags work on a package as on a folder: an archive of bare content gets its plist.
    @Test func flagsFillInAPackageWithoutAPlist() async throws {
        let scratch = try Scratch()
        try scratch.write("bare/Contents/level.dat", "level")
        try await CommandRunner.shell("bsdtar -cf bare.tar -C bare Contents", in: scratch.url)
        let result = try await CommandRunner.pkgtool(["create", scratch.path("bare.tar"), "--product-id", "com.acme.bare",
                                                      "--content-version", "3.0", "--json"], in: scratch.url)
        #expect(result.status == 0, "\(result.stdout)")
        #expect(result.json["output"] as? String == "./com.acme.bare-3.0.pkg")
        let plist = try await CommandRunner.shell("bsdtar -xOf com.acme.bare-3.0.pkg ContentInfo.plist", in: scratch.url).stdout
        #expect(plist.contains("<string>com.acme.bare</string>"))
    }

    /// A package that breaks a rule is refused with its own findings, and nothing is left
    /// behind: no output, no unpacked copy.
    @Test func anInvalidPackageIsRefusedAndLeavesNothing() async throws {
        let scratch = try Scratch()
        let source = try scratch.content("bad", id: "com.acme.bad", version: "1.0", files: ["run.sh": "#!/bin/sh\necho hi\n"])
        try scratch.write("bad/stray.txt", "outside")
        try await CommandRunner.shell("bsdtar -cf bad.tar -C '\(source)' ContentInfo.plist Contents stray.txt", in: scratch.url)
        let result = try await CommandRunner.pkgtool(["create", scratch.path("bad.tar"), "-o", scratch.path("out/o.pkg"), "--json"])
        #expect(result.status == 1, "\(result.stdout)")
        #expect(codes(result.json) == ["outside-contents"], "\(result.stdout)")
        #expect(!FileManager.default.fileExists(atPath: scratch.path("out")))
        // Executable code is found in the data, on the full read.
        try FileManager.default.removeItem(atPath: scratch.path("bad/stray.txt"))
        try await CommandRunner.shell("bsdtar -cf code.tar -C '\(source)' ContentInfo.plist Contents", in: scratch.url)
        try FileManager.default.createDirectory(atPath: scratch.path("out"), withIntermediateDirectories: true)
        let code = try await CommandRunner.pkgtool(["create", scratch.path("code.tar"), "-o", scratch.path("out/o.pkg"), "--json"])
        #expect(code.status == 1, "\(code.stdout)")
        #expect(codes(code.json) == ["executable-code"], "\(code.stdout)")
        #expect(scratch.list("out").isEmpty, "\(scratch.list("out"))")
    }

    /// What a killed create left unpacked beside its output is removed by the next one there;
    /// a live process's is not.
    @Test func aKilledRunsStagingIsRemovedByTheNext() async throws {
        let scratch = try Scratch()
        let zip = try await finderZip(scratch)
        let ended = Process()
        ended.executableURL = URL(fileURLWithPath: "/bin/true")
        try ended.run()
        ended.waitUntilExit()
        try scratch.write("out/.pkgtool-create-\(ended.processIdentifier)-leftover/Contents/a.txt", "left")
        try scratch.write("out/.pkgtool-create-1-alive/Contents/a.txt", "init's")
        let result = try await CommandRunner.pkgtool(["create", zip, "-o", scratch.path("out/o.pkg")])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Set(scratch.list("out")) == ["o.pkg", ".pkgtool-create-1-alive"], "\(scratch.list("out"))")
    }

    @Test func aFileThatIsNoPackageIsUnreadableArchive() async throws {
        let scratch = try Scratch()
        try scratch.write("notes.txt", "just text")
        let result = try await CommandRunner.pkgtool(["create", scratch.path("notes.txt"), "-o", scratch.path("o.pkg")])
        #expect(result.status == 1)
        #expect(result.stderr.contains("error[unreadable-archive]"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: scratch.path("o.pkg")))
    }

    /// The source itself is never replaced by its rebuild.
    @Test func theOutputCannotBeTheSource() async throws {
        let scratch = try Scratch()
        let zip = try await finderZip(scratch)
        try FileManager.default.copyItem(atPath: zip, toPath: scratch.path("com.acme.desert-1.0.pkg"))
        let before = try scratch.read("com.acme.desert-1.0.pkg")
        let result = try await CommandRunner.pkgtool(["create", "com.acme.desert-1.0.pkg"], in: scratch.url)
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains("is the source package"), "\(result.stderr)")
        #expect(try scratch.read("com.acme.desert-1.0.pkg") == before)
    }

    /// `create --help` says what SOURCE may be, and no longer that zip is how content reaches devices.
    @Test func helpSaysAPackageIsASource() async throws {
        let help = try await CommandRunner.pkgtool(["create", "--help"])
        #expect(help.stdout.contains("SOURCE may also be a package"), "\(help.stdout)")
        #expect(!help.stdout.contains("the store delivers"))
    }
}
