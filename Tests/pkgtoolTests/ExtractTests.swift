import Foundation
import Testing
import TestSupport

/// End-to-end tests of `pkgtool extract`, run against the built binary (`make test` builds it).
private func json(_ text: String) -> [String: Any] {
    (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
}

@Suite(.offThePool) struct ExtractTests {
    @Test func installsThenUnchanged() throws {
        let s = try Scratch()
        let pkg = try s.package("one", version: "1.0", text: ["a.txt": "hello", "art/b.txt": "world"])
        let first = try CommandRunner.pkgtool(["extract", pkg, "--documents", s.documents])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains("installed com.example.book 1.0 -> \(s.documents)/com.example.book/1.0 (2 files, 10 bytes)"))
        #expect(FileManager.default.contents(atPath: s.documents + "/com.example.book/1.0/art/b.txt") == Data("world".utf8))
        #expect(FileManager.default.fileExists(atPath: s.documents + "/com.example.book/ContentInfo.plist"))

        let second = try CommandRunner.pkgtool(["extract", pkg, "--documents", s.documents, "--json"])
        #expect(second.status == 0)
        let object = json(second.stdout)
        #expect(object["status"] as? String == "unchanged")
        #expect(object["previousVersion"] as? String == "1.0")
        #expect(object["fileCount"] as? Int == 2)
        #expect(object["payloadBytes"] as? Int == 10)
        #expect((object["removedVersions"] as? [Any])?.isEmpty == true)
    }

    @Test(arguments: [0o077, 0o022, 0o000] as [mode_t])
    func contentFilesAreReadableByAllWhateverTheUmask(_ mask: mode_t) throws {
        // The mode a package's files are installed with is the package's rule, never the umask of
        // the process that extracted it (a restrictive one, or one that lets more through).
        let s = try Scratch()
        let pkg = try s.package("one", version: "1.0", text: ["a.txt": "hello", "art/b.txt": "world"])
        let result = try CommandRunner.run("/bin/sh", ["-c", "umask \(String(mask, radix: 8)) && exec \"$0\" extract \"$1\" --documents \"$2\"",
                                                        CommandRunner.pkgtool, pkg, s.documents])
        #expect(result.status == 0, "\(result.stderr)")
        for file in ["a.txt", "art/b.txt"] {
            let attributes = try FileManager.default.attributesOfItem(atPath: s.documents + "/com.example.book/1.0/" + file)
            #expect((attributes[.posixPermissions] as? Int) == 0o644, "\(file) under umask \(String(mask, radix: 8))")
        }
    }

    @Test func jsonNullsAndUpgradeWithKeep() throws {
        let s = try Scratch()
        let one = try s.package("one", version: "1.0", text: ["a.txt": "1"])
        let two = try s.package("two", version: "1.1", text: ["a.txt": "2"])
        let first = try CommandRunner.pkgtool(["extract", one, "--documents", s.documents, "--json"])
        #expect(first.status == 0)
        #expect(first.stdout.contains("\"previousVersion\" : null"))
        let second = try CommandRunner.pkgtool(["extract", two, "--documents", s.documents, "--json", "--keep", "1"])
        #expect(second.status == 0)
        let object = json(second.stdout)
        #expect(object["status"] as? String == "installed")
        #expect(object["previousVersion"] as? String == "1.0")
        #expect(object["removedVersions"] as? [String] == ["1.0"])
        let listing = names(s.documents + "/com.example.book")
        #expect(listing == [".lock", "1.1", "ContentInfo.plist"])
    }

    @Test func refusalsExitOne() throws {
        let s = try Scratch()
        let two = try s.package("two", version: "2.0", text: ["a.txt": "2"])
        let one = try s.package("one", version: "1.0", text: ["a.txt": "1"])
        let other = try s.package("other", version: "2.0", text: ["a.txt": "different"])
        #expect(try CommandRunner.pkgtool(["extract", two, "--documents", s.documents]).status == 0)
        let downgrade = try CommandRunner.pkgtool(["extract", one, "--documents", s.documents, "--json"])
        #expect(downgrade.status == 1)
        #expect(json(downgrade.stdout)["status"] as? String == "refused")
        #expect(downgrade.stdout.contains("version-not-bumped"))
        let same = try CommandRunner.pkgtool(["extract", other, "--documents", s.documents])
        #expect(same.status == 1)
        #expect(same.stderr.contains("error[version-not-bumped]"))
        let forced = try CommandRunner.pkgtool(["extract", other, "--documents", s.documents, "--force"])
        #expect(forced.status == 0)
        #expect(FileManager.default.contents(atPath: s.documents + "/com.example.book/2.0/a.txt") == Data("different".utf8))
        let mismatch = try CommandRunner.pkgtool(["extract", two, "--documents", s.documents, "--product-id", "com.other"])
        #expect(mismatch.status == 1)
        #expect(mismatch.stderr.contains("product-identifier-mismatch"))
    }

    @Test func usageErrors() throws {
        let s = try Scratch()
        let pkg = try s.package("one", version: "1.0", text: ["a.txt": "1"])
        #expect(try CommandRunner.pkgtool(["extract", pkg, "--documents", s.documents, "--keep", "0"]).status == 64)
        #expect(try CommandRunner.pkgtool(["extract", pkg]).status == 64)
        #expect(try CommandRunner.pkgtool(["extract", s.root + "/missing.pkg", "--documents", s.documents]).status == 2)
    }

    /// Hostile tars: `..` paths, absolute paths and escaping links install nothing anywhere.
    @Test(arguments: ["dotdot", "absolute", "symlink"])
    func hostileTarInstallsNothing(kind: String) throws {
        let s = try Scratch()
        let sentinel = s.root + "/sentinel"
        try FileManager.default.createDirectory(atPath: sentinel, withIntermediateDirectories: true)
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: sentinel + "/precious.txt"))
        let before = snapshot(sentinel)

        let source = s.root + "/evil"
        try FileManager.default.createDirectory(atPath: source + "/Contents", withIntermediateDirectories: true)
        try Data("""
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0"><dict><key>ContentVersion</key><string>1.0</string>\
            <key>IAPProductIdentifier</key><string>com.example.evil</string></dict></plist>
            """.utf8).write(to: URL(fileURLWithPath: source + "/ContentInfo.plist"))
        try Data("fine".utf8).write(to: URL(fileURLWithPath: source + "/Contents/ok.txt"))
        try Data("bad".utf8).write(to: URL(fileURLWithPath: source + "/Contents/x.txt"))
        let archive = s.root + "/evil.pkg"
        var arguments = ["-cf", archive, "-C", source]
        switch kind {
        case "dotdot":
            arguments += ["-P", "-s", ",^Contents/x.txt$,Contents/../../sentinel/escape.txt,", "ContentInfo.plist", "Contents"]
        case "absolute":
            arguments += ["-P", "-s", ",^Contents/x.txt$,\(sentinel)/escape.txt,", "ContentInfo.plist", "Contents"]
        default:
            try FileManager.default.removeItem(atPath: source + "/Contents/x.txt")
            try FileManager.default.createSymbolicLink(atPath: source + "/Contents/evil", withDestinationPath: "../../../sentinel")
            arguments += ["ContentInfo.plist", "Contents"]
        }
        let tar = try CommandRunner.run("/usr/bin/bsdtar", arguments)
        #expect(tar.status == 0, "bsdtar: \(tar.stderr)")

        let result = try CommandRunner.pkgtool(["extract", archive, "--documents", s.documents, "--json"])
        #expect(result.status == 1, "\(result.stdout) \(result.stderr)")
        #expect(json(result.stdout)["status"] as? String == "refused")
        #expect(snapshot(sentinel) == before)
        let created = (try? FileManager.default.contentsOfDirectory(atPath: s.documents)) ?? []
        #expect(created.isEmpty)
    }

    @Test func productFolderIsAFileExitsTwo() throws {
        let s = try Scratch()
        let pkg = try s.package("one", version: "1.0", text: ["a.txt": "1"])
        try FileManager.default.createDirectory(atPath: s.documents, withIntermediateDirectories: true)
        try Data("not a folder".utf8).write(to: URL(fileURLWithPath: s.documents + "/com.example.book"))
        let result = try CommandRunner.pkgtool(["extract", pkg, "--documents", s.documents])
        #expect(result.status == 2)
        #expect(result.stderr.contains("error[io-error]"))
        #expect(FileManager.default.contents(atPath: s.documents + "/com.example.book") == Data("not a folder".utf8))
    }

    @Test func ioFailureKeepsPreviousVersion() throws {
        let s = try Scratch()
        let one = try s.package("one", version: "1.0", text: ["a.txt": "1"])
        let two = try s.package("two", version: "1.1", text: ["a.txt": "2"])
        #expect(try CommandRunner.pkgtool(["extract", one, "--documents", s.documents]).status == 0)
        let product = s.documents + "/com.example.book"
        let record = FileManager.default.contents(atPath: product + "/ContentInfo.plist")
        // A file where the new version folder must go: the final rename fails.
        try Data("blocker".utf8).write(to: URL(fileURLWithPath: product + "/1.1"))
        let result = try CommandRunner.pkgtool(["extract", two, "--documents", s.documents])
        #expect(result.status == 2, "\(result.stderr)")
        #expect(FileManager.default.contents(atPath: product + "/ContentInfo.plist") == record)
        #expect(FileManager.default.contents(atPath: product + "/1.0/a.txt") == Data("1".utf8))
        let listing = names(product)
        #expect(listing == [".lock", "1.0", "1.1", "ContentInfo.plist"])
    }

    @Test func symlinkedProductFolderExitsTwo() throws {
        let s = try Scratch()
        let pkg = try s.package("one", version: "1.0", text: ["a.txt": "1"])
        let elsewhere = s.root + "/elsewhere"
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: s.documents, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: s.documents + "/com.example.book", withDestinationPath: elsewhere)
        let result = try CommandRunner.pkgtool(["extract", pkg, "--documents", s.documents])
        #expect(result.status == 2)
        #expect(result.stderr.contains("symbolic link"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere).isEmpty)
    }
    @Test func hardLinkInTarInstalledInside() throws {
        let s = try Scratch()
        let source = s.root + "/hl"
        try FileManager.default.createDirectory(atPath: source + "/Contents/d", withIntermediateDirectories: true)
        try Data("""
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict><key>ContentVersion</key><string>1.0</string>\
            <key>IAPProductIdentifier</key><string>com.example.hl</string></dict></plist>
            """.utf8).write(to: URL(fileURLWithPath: source + "/ContentInfo.plist"))
        try Data("data".utf8).write(to: URL(fileURLWithPath: source + "/Contents/a.txt"))
        try FileManager.default.linkItem(atPath: source + "/Contents/a.txt", toPath: source + "/Contents/d/b.txt")
        let archive = s.root + "/hl.pkg"
        #expect(try CommandRunner.run("/usr/bin/bsdtar", ["-cf", archive, "-C", source, "ContentInfo.plist", "Contents"]).status == 0)
        let first = try CommandRunner.pkgtool(["extract", archive, "--documents", s.documents, "--json"])
        #expect(first.status == 0, "\(first.stdout) \(first.stderr)")
        #expect(FileManager.default.contents(atPath: s.documents + "/com.example.hl/1.0/d/b.txt") == Data("data".utf8))
        let second = try CommandRunner.pkgtool(["extract", archive, "--documents", s.documents, "--json"])
        #expect(json(second.stdout)["status"] as? String == "unchanged")
    }

    /// Installing is not uploading: `extract` takes a `.zip` (issue 21, item 3: it was refused
    /// with bad-extension), while `validate` still says a content package is a `.pkg`.
    @Test func aZipInstalls() throws {
        let s = try Scratch()
        let source = try s.content("MyLevels", id: "com.example.levels", version: "1.0", files: ["a.txt": "a"])
        #expect(try CommandRunner.pkgtool(["create", source, "--format", "zip", "-o", s.path("MyLevels.pkg")]).status == 0)
        try FileManager.default.moveItem(atPath: s.path("MyLevels.pkg"), toPath: s.path("MyLevels.zip"))
        let extract = try CommandRunner.pkgtool(["extract", s.path("MyLevels.zip"), "--documents", s.documents, "--json"])
        #expect(extract.status == 0, "\(extract.stdout)")
        #expect(json(extract.stdout)["status"] as? String == "installed")
        #expect((json(extract.stdout)["diagnostics"] as? [Any])?.isEmpty == true, "\(extract.stdout)")
        #expect(s.text("Documents/com.example.levels/1.0/a.txt") == "a")
        let validate = try CommandRunner.pkgtool(["validate", s.path("MyLevels.zip"), "--json"])
        #expect(codes(validate.json) == ["bad-extension"])
    }
}
