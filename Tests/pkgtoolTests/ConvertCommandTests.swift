import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// End-to-end tests of `pkgtool convert --to background-assets` (SPEC section 8), run against
/// the built binary (`make test` builds it): one test per rule of the section, then the choices
/// the README documents where the section is silent.
@Suite(.offThePool) struct ConvertCommandTests {
    /// Runs `pkgtool convert PACKAGES --to background-assets --out OUT` plus `extra`.
    private func convert(_ packages: [String], out: String, _ extra: [String] = []) throws -> CommandResult {
        try CommandRunner.pkgtool(["convert"] + packages + ["--to", "background-assets", "--out", out] + extra)
    }

    /// The manifest §8 gives for `packID`, as parsed JSON.
    private func expectedManifest(_ packID: String, policy: String = "onDemand", platforms: [String] = ["iOS"]) -> NSDictionary {
        let body: [String: Any] = policy == "onDemand" ? [:] : ["installationEventTypes": ["firstInstallation", "subsequentUpdate"]]
        return [
            "assetPackID": packID,
            "downloadPolicy": [policy: body],
            "fileSelectors": [["directory": packID]],
            "platforms": platforms,
        ] as NSDictionary
    }

    private func parsed(_ path: String) -> NSDictionary? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return (try? JSONSerialization.jsonObject(with: data)) as? NSDictionary
    }

    // MARK: - Section 8, rule by rule

    /// "Validates each package first; if any is invalid nothing is converted (exit 1)."
    @Test func anyInvalidPackageConvertsNothing() throws {
        let s = try Scratch()
        let good = try s.package("good", id: "com.example.good", version: "1.0", text: ["a.txt": "fine\n"])
        let bad = try s.content("bad", id: "com.example.bad", version: "1.0", files: ["a.txt": "fine\n"])
        try s.write("bad/Contents/tool", [0x7F, 0x45, 0x4C, 0x46, 2, 1, 1, 0] + [UInt8](repeating: 0, count: 64))
        try s.write("out/keep.txt", "mine\n")
        let before = snapshot(s.path("out"))

        let result = try convert([good, bad], out: s.path("out"), ["--json"])
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        #expect(codes(result.json).contains("executable-code"))
        #expect((result.json["packs"] as? [Any])?.isEmpty == true)
        #expect(snapshot(s.path("out")) == before, "the output folder changed")

        // A missing output folder is not even created.
        let fresh = try convert([good, bad], out: s.path("fresh/assets"))
        #expect(fresh.status == 1)
        #expect(!exists(s.path("fresh")))
        #expect(fresh.stderr.contains("error[executable-code]"))
    }

    /// "DIR may exist: each pack's folder and manifest are replaced whole, other files in DIR
    /// are left alone."
    @Test func existingFolderKeepsOtherFilesAndReplacesPacksWhole() throws {
        let s = try Scratch()
        let pkg = try s.package("p", id: "com.example.book", version: "2.0", text: ["new.txt": "new\n", "art/b.txt": "b\n"])
        try s.write("out/notes.txt", "my notes\n")
        try s.write("out/other-pack/Contents/x.txt", "someone else's\n")
        try s.write("out/other-pack.json", "{\"assetPackID\": \"other-pack\"}\n")
        try s.write("out/com-example-book/Contents/stale.txt", "from an old conversion\n")
        try s.write("out/com-example-book/ContentInfo.plist", plist(id: "com.example.book", version: "1.0"))
        try s.write("out/com-example-book.json", "{\"old\": true}\n")
        let untouched = ["notes.txt", "other-pack", "other-pack/Contents", "other-pack/Contents/x.txt", "other-pack.json"]
        let before = snapshot(s.path("out")).filter { untouched.contains($0.key) }

        let result = try convert([pkg], out: s.path("out"))
        #expect(result.status == 0, "\(result.stderr)")
        let after = snapshot(s.path("out"))
        #expect(after.filter { untouched.contains($0.key) } == before)
        #expect(differences(s.path("out/com-example-book"), expected: snapshot(s.path("src-p"))).isEmpty)
        #expect(after["com-example-book/Contents/stale.txt"] == nil, "the old pack folder was merged, not replaced")
        #expect(parsed(s.path("out/com-example-book.json")) == expectedManifest("com-example-book"))
        // Nothing staged is left behind.
        #expect(s.list("out").filter { $0.hasPrefix(".") }.isEmpty, "\(s.list("out"))")
    }

    /// "Asset pack ID: the product identifier with every character outside A-Z a-z 0-9 replaced
    /// by `-`, runs of `-` made one, and `-` trimmed from both ends" (ITMS-91133).
    @Test(arguments: [("com.example.my_book.Chapter_1", "com-example-my-book-Chapter-1"),
                      ("com.example.book__2", "com-example-book-2"),
                      ("_internal._pack_", "internal-pack")])
    func packIDKeepsLettersDigitsAndInnerHyphens(product: String, packID: String) throws {
        let s = try Scratch()
        let pkg = try s.package("p", id: product, version: "1.0", text: ["a.txt": "a\n"])
        let result = try convert([pkg], out: s.path("out"), ["--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let pack = (result.json["packs"] as? [[String: Any]])?.first
        #expect(pack?["assetPackID"] as? String == packID)
        #expect(s.list("out") == ["README.txt", packID, packID + ".json"])
        #expect(parsed(s.path("out/\(packID).json")) == expectedManifest(packID))
        let text = try convert([pkg], out: s.path("text"))
        #expect(text.stdout.contains("\nxcrun ba-package \(packID).json -o \(packID).aar\n"), "\(text.stdout)")
    }

    /// A product identifier with no letter or digit has no pack ID to give: refused, naming it.
    @Test func productWithoutLettersOrDigitsIsRefused() throws {
        let s = try Scratch()
        let pkg = try s.package("p", id: "_._", version: "1.0", text: ["a.txt": "a\n"])
        let result = try convert([pkg], out: s.path("out"))
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("error[invalid-product-identifier]") && result.stderr.contains("_._ (\(pkg)) has no letter or digit"),
                "\(result.stderr)")
        #expect(!exists(s.path("out")))
    }

    /// "Two packages whose IDs collide are refused." Also when they differ only in case: one
    /// folder on a Mac's disk, where ba-package runs.
    @Test(arguments: [("com.a_b", "com.a.b"), ("com.Example.book", "com.example.book"), ("com.a", "com._a"), ("a.b_", "a.b")])
    func collidingPackIDsAreRefused(first: String, second: String) throws {
        let s = try Scratch()
        let a = try s.package("a", id: first, version: "1.0", text: ["a.txt": "a\n"])
        let b = try s.package("b", id: second, version: "1.0", text: ["b.txt": "b\n"])
        let result = try convert([a, b], out: s.path("out"), ["--json"])
        #expect(result.status == 1)
        #expect(codes(result.json).contains("asset-pack-id-collision"), "\(result.stdout)")
        #expect((result.json["packs"] as? [Any])?.isEmpty == true)
        #expect(!exists(s.path("out")))
        let text = try convert([a, b], out: s.path("out"))
        #expect(text.stderr.contains("error[asset-pack-id-collision]") && text.stderr.contains(first) && text.stderr.contains(second))
    }

    /// "One pack per product; its latest version wins when several versions of a product are
    /// given." Versions compare numerically (1.10 > 1.9 > 1.2), whatever the order given.
    @Test func latestVersionOfEachProductWins() throws {
        let s = try Scratch()
        let v19 = try s.package("v19", id: "com.example.book", version: "1.9", text: ["a.txt": "1.9\n"])
        let v110 = try s.package("v110", id: "com.example.book", version: "1.10", text: ["a.txt": "1.10\n", "more.txt": "m\n"])
        let v12 = try s.package("v12", id: "com.example.book", version: "1.2", text: ["a.txt": "1.2\n"])
        let other = try s.package("other", id: "com.example.other", version: "3.0", text: ["o.txt": "o\n"])
        let result = try convert([v19, v110, other, v12], out: s.path("out"), ["--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let packs = result.json["packs"] as? [[String: Any]] ?? []
        #expect(packs.map { $0["assetPackID"] as? String } == ["com-example-book", "com-example-other"])
        #expect(packs.first?["contentVersion"] as? String == "1.10")
        #expect(Set(result.json["superseded"] as? [String] ?? []) == [v19, v12])
        #expect(differences(s.path("out/com-example-book"), expected: snapshot(s.path("src-v110"))).isEmpty)
        #expect(s.list("out") == ["README.txt", "com-example-book", "com-example-book.json", "com-example-other", "com-example-other.json"])
    }

    /// "Writes DIR/<packID>/ holding the package's ContentInfo.plist and its Contents/ tree":
    /// byte for byte, from a xar, a zip and an unpacked folder alike; links stay links.
    @Test(arguments: ["xar", "zip", "folder"])
    func packFolderIsThePackagesTreeByteForByte(format: String) throws {
        let s = try Scratch()
        var files: [String: Data] = [
            "chapter.txt": Data("It was a dark and stormy night.\n".utf8),
            "art/cover.png": randomData(70_000),
            "deep/er/still/data.bin": Data((0..<256).map { UInt8($0) }),
            "empty.txt": Data(),
        ]
        files["big.bin"] = randomData(3 << 20)
        try s.mkdir("src/Contents")
        for (path, data) in files { try s.write("src/Contents/" + path, data) }
        try FileManager.default.createSymbolicLink(atPath: s.path("src/Contents/art/latest.png"), withDestinationPath: "cover.png")
        try s.write("src/ContentInfo.plist", plist(id: "com.example.tree", version: "1.0", extra: "\n\t<key>Note</key>\n\t<string>kept</string>"))
        let input: String
        switch format {
        case "folder": input = s.path("src")
        default:
            input = s.path("tree.pkg")
            let created = try CommandRunner.pkgtool(["create", s.path("src"), "-o", input, "--format", format])
            try #require(created.status == 0, "\(created.stderr)")
        }
        let result = try convert([input], out: s.path("out"))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(differences(s.path("out/com-example-tree"), expected: snapshot(s.path("src"))).isEmpty,
                "\(differences(s.path("out/com-example-tree"), expected: snapshot(s.path("src"))))")
        #expect(try s.read("out/com-example-tree/ContentInfo.plist") == s.read("src/ContentInfo.plist"))
    }

    /// "`DIR/<packID>.json`, the ba-package manifest" in exactly §8's shape, for each download
    /// policy; the same inputs give the same bytes.
    @Test(arguments: [("on-demand", "onDemand"), ("prefetch", "prefetch"), ("essential", "essential")])
    func manifestHasTheSpecifiedShape(flag: String, key: String) throws {
        let s = try Scratch()
        let pkg = try s.package("p", id: "com.example.book", version: "1.0", text: ["a.txt": "a\n"])
        let first = try convert([pkg], out: s.path("one"), ["--download-policy", flag])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(parsed(s.path("one/com-example-book.json")) == expectedManifest("com-example-book", policy: key))
        let second = try convert([pkg], out: s.path("two"), ["--download-policy", flag])
        #expect(second.status == 0)
        #expect(try s.read("one/com-example-book.json") == s.read("two/com-example-book.json"))
        #expect(try s.read("one/README.txt") == s.read("two/README.txt"))
    }

    /// `--platform` repeats; iOS when none is given; exactly `iOS`, `macOS`, `tvOS` and
    /// `visionOS` are accepted: anything else is usage (64) listing them, and nothing is written.
    @Test func platforms() throws {
        let s = try Scratch()
        let pkg = try s.package("p", id: "com.example.book", version: "1.0", text: ["a.txt": "a\n"])
        #expect(try convert([pkg], out: s.path("a"), ["--platform", "visionOS", "--platform", "iOS", "--platform", "iOS"]).status == 0)
        #expect(parsed(s.path("a/com-example-book.json")) == expectedManifest("com-example-book", platforms: ["iOS", "visionOS"]))
        #expect(try convert([pkg], out: s.path("b"), ["--platform", "macOS", "--platform", "tvOS"]).status == 0)
        #expect(parsed(s.path("b/com-example-book.json")) == expectedManifest("com-example-book", platforms: ["macOS", "tvOS"]))
        for wrong in ["ios", "IOS", "macos", "watchOS", "iPadOS"] {
            let result = try convert([pkg], out: s.path("c"), ["--platform", wrong])
            #expect(result.status == 64, "\(wrong): \(result.status) \(result.stderr)")
            #expect(["iOS", "macOS", "tvOS", "visionOS"].allSatisfy { result.stderr.contains("'\($0)'") }, "\(result.stderr)")
        }
        #expect(!exists(s.path("c")))
    }

    /// "Paths in a manifest are relative to DIR, where ba-package is run": the directory selector
    /// names the pack folder beside the manifest.
    @Test func manifestPathsAreRelativeToTheOutputFolder() throws {
        let s = try Scratch()
        let pkg = try s.package("p", id: "com.example.book", version: "1.0", text: ["a.txt": "a\n"])
        #expect(try convert([pkg], out: s.path("deep/out")).status == 0)
        let manifest = parsed(s.path("deep/out/com-example-book.json"))
        let selector = (manifest?["fileSelectors"] as? [[String: String]])?.first?["directory"]
        #expect(selector == "com-example-book")
        var isFolder: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: s.path("deep/out/") + (selector ?? "?"), isDirectory: &isFolder) && isFolder.boolValue)
    }

    /// "Prints, and writes to DIR/README.txt, the exact xcrun ba-package commands to run in DIR,
    /// and the product → pack ID table."
    @Test func printsAndWritesCommandsAndTable() throws {
        let s = try Scratch()
        let one = try s.package("one", id: "com.example.book.chapter1", version: "1.1", text: ["a.txt": "a\n"])
        let two = try s.package("two", id: "com.example.book_chapter2", version: "2.0", text: ["b.txt": "b\n"])
        let result = try convert([one, two], out: s.path("out"))
        #expect(result.status == 0, "\(result.stderr)")
        let readme = s.text("out/README.txt") ?? ""
        for (product, version, pack) in [("com.example.book.chapter1", "1.1", "com-example-book-chapter1"),
                                         ("com.example.book_chapter2", "2.0", "com-example-book-chapter2")] {
            let command = "xcrun ba-package \(pack).json -o \(pack).aar"
            #expect(result.stdout.split(separator: "\n").contains { $0 == command }, "\(result.stdout)")
            #expect(readme.split(separator: "\n").contains { $0 == command }, "\(readme)")
            for text in [result.stdout, readme] {
                let row = text.split(separator: "\n").first { $0.hasPrefix(product + " ") }
                #expect(row.map { $0.split(separator: " ") == [Substring(product), Substring(version), Substring(pack)] } == true, "\(text)")
            }
        }
        #expect(!readme.contains(s.root), "README.txt names this machine's paths")
        // What is left after ba-package, in the app, is in the docs: README.txt says where.
        #expect(readme.contains("docs/background-assets.md") && readme.contains("BAHasManagedAssetPacks"), "\(readme)")
    }

    /// "`--json` gives {"packs": [{"productIdentifier", "contentVersion", "assetPackID",
    /// "manifest", "directory"}]}", and nothing else on stdout.
    @Test func jsonOutput() throws {
        let s = try Scratch()
        let pkg = try s.package("p", id: "com.example.book", version: "1.2.3", text: ["a.txt": "a\n"])
        let result = try convert([pkg], out: s.path("out"), ["--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let packs = try #require(result.json["packs"] as? [[String: Any]])
        #expect(packs.count == 1)
        #expect(packs[0]["productIdentifier"] as? String == "com.example.book")
        #expect(packs[0]["contentVersion"] as? String == "1.2.3")
        #expect(packs[0]["assetPackID"] as? String == "com-example-book")
        #expect(packs[0]["manifest"] as? String == s.path("out/com-example-book.json"))
        #expect(packs[0]["directory"] as? String == s.path("out/com-example-book"))
        #expect(result.json["status"] as? String == "converted")
        #expect(!result.stdout.contains("xcrun"), "text output mixed into the JSON document")
    }

    /// "Within one pack, two paths equal when compared ignoring case or after Unicode NFC
    /// normalization are refused (error case-collision, exit 1)": a Mac's disk, where
    /// ba-package runs, would keep one file of the two. The message says which kind of clash;
    /// validate still only warns.
    @Test(arguments: [("Level.json", "level.json", "only in letter case"),
                      ("caf\u{E9}.txt", "cafe\u{301}.txt", "in another Unicode normalization"),
                      ("Caf\u{E9}.txt", "cafe\u{301}.txt", "only in letter case and Unicode normalization")])
    func namesAMacWouldMergeAreRefused(first: String, second: String, kind: String) throws {
        let s = try Scratch()
        // Written one by one: Swift's strings (a dictionary's keys) are equal in either normalization.
        let source = try s.content("src", id: "com.example.book", version: "1.0", files: [first: "one\n"])
        try s.write("src/Contents/" + second, "two\n")
        #expect(s.list("src/Contents").count == 2, "the file system merged the names")
        let result = try convert([source], out: s.path("out"), ["--json"])
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        let diagnostics = (result.json["packages"] as? [[String: Any]])?.first?["diagnostics"] as? [[String: Any]] ?? []
        let collision = diagnostics.first { $0["code"] as? String == "case-collision" }
        #expect(collision?["severity"] as? String == "error", "\(result.stdout)")
        #expect((collision?["message"] as? String)?.contains(kind) == true, "\(result.stdout)")
        #expect((collision?["message"] as? String)?.contains("case-insensitive file system") == false)
        #expect(!exists(s.path("out")))

        let text = try convert([source], out: s.path("out"))
        #expect(text.status == 1)
        #expect(text.stderr.contains("error[case-collision]") && text.stderr.contains(kind), "\(text.stderr)")
        let validate = try CommandRunner.pkgtool(["validate", source])
        #expect(validate.status == 0, "\(validate.stderr)")
        #expect(validate.stderr.contains("warning[case-collision]") && validate.stderr.contains(kind), "\(validate.stderr)")
    }

    /// Folders a zip implies without listing them (`zip -D`) are paths too: `Art/a.txt` and
    /// `art/b.txt` would land in one folder on a Mac.
    @Test func impliedFoldersAMacWouldMergeAreRefused() throws {
        let s = try Scratch()
        let source = try s.content("src", id: "com.example.book", version: "1.0", files: ["Art/a.txt": "a\n", "art/b.txt": "b\n"])
        let zip = s.path("book.pkg")
        let zipped = try CommandRunner.run("/bin/sh", ["-c", "cd \"$1\" && zip -qrD \"$2\" ContentInfo.plist Contents", "sh", source, zip])
        try #require(zipped.status == 0, "\(zipped.stderr)")
        let result = try convert([zip], out: s.path("out"))
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("error[case-collision] Contents/art: differs from 'Contents/Art' only in letter case"), "\(result.stderr)")
        #expect(!exists(s.path("out")))
    }

    /// "convert reports every diagnostic validate would report for the same package, not a
    /// subset": errors only a full read finds (code) and those a first look finds (names) alike.
    @Test(arguments: ["folder", "xar"])
    func reportsEveryDiagnosticValidateReports(format: String) throws {
        let s = try Scratch()
        let elf: [UInt8] = [0x7F, 0x45, 0x4C, 0x46, 2, 1, 1, 0] + [UInt8](repeating: 0, count: 64)
        let source = try s.content("src", id: "com.example.book", version: "1.0", files: ["a.txt": "a\n"])
        try s.write("src/Contents/tool", elf)
        try s.write("src/Contents/lib/other", [0xCF, 0xFA, 0xED, 0xFE] + [UInt8](repeating: 0, count: 64))
        try s.write("src/Contents/run.sh", "#!/bin/sh\necho hi\n")
        try s.write("src/Contents/Read.txt", "r\n")
        try s.write("src/Contents/read.txt", "r\n")
        try s.write("src/Contents/.DS_Store", "junk")
        try s.write("src/Contents/x.bin", "plain", mode: 0o755)
        let input: String
        if format == "folder" {
            input = source
        } else {
            input = try XarCrafter([XarCrafter.contentInfo(), .file("Contents/a.txt", "a\n"),
                                    XarCrafter.File(path: "Contents/tool", data: elf), .file("Contents/run.sh", "#!/bin/sh\n"),
                                    .file("Contents/Read.txt", "r"), .file("Contents/read.txt", "r"),
                                    .file("Contents/._a.txt", "junk"), .file("Contents/x.bin", "plain", mode: "0755")])
                .write(to: s.path("book.pkg"))
        }
        let validate = try CommandRunner.pkgtool(["validate", input, "--json"])
        let expected = ((validate.json["packages"] as? [[String: Any]])?.first?["diagnostics"] as? [[String: Any]] ?? [])
            .map { "\($0["code"] ?? "") \($0["path"] ?? "")" }
        #expect(expected.count >= 5, "\(validate.stdout)")
        let result = try convert([input], out: s.path("out"), ["--json"])
        #expect(result.status == 1)
        let reported = ((result.json["packages"] as? [[String: Any]])?.first?["diagnostics"] as? [[String: Any]] ?? [])
            .map { "\($0["code"] ?? "") \($0["path"] ?? "")" }
        #expect(reported == expected, "validate:\n\(validate.stdout)\nconvert:\n\(result.stdout)")
        let text = try convert([input], out: s.path("out"))
        let lines = text.stderr.split(separator: "\n").filter { $0.hasPrefix("error[") || $0.hasPrefix("warning[") }
        #expect(lines.count == expected.count, "\(text.stderr)")
    }

    // MARK: - Exit codes (SPEC section 4)

    /// A missing input is exit 2 (nothing converted, the path listed as `unreadable-input`).
    @Test func missingInputExitsTwo() throws {
        let s = try Scratch()
        let pkg = try s.package("p", id: "com.example.book", version: "1.0", text: ["a.txt": "a\n"])
        let result = try convert([pkg, s.path("nothere.pkg")], out: s.path("out"), ["--json"])
        #expect(result.status == 2)
        #expect(codes(result.json).contains("unreadable-input"))
        #expect((result.json["packages"] as? [[String: Any]])?.map { $0["path"] as? String } == [pkg, s.path("nothere.pkg")])
        #expect(!exists(s.path("out")))
    }

    /// Wrong usage is exit 64: no package, no or another `--to`, no `--out`, an unknown policy
    /// or platform (watchOS has no asset packs).
    @Test func usageErrorsExit64() throws {
        let s = try Scratch()
        let pkg = try s.package("p", id: "com.example.book", version: "1.0", text: ["a.txt": "a\n"])
        let out = s.path("out")
        for arguments in [["convert", "--to", "background-assets", "--out", out],
                          ["convert", pkg, "--out", out],
                          ["convert", pkg, "--to", "zip", "--out", out],
                          ["convert", pkg, "--to", "background-assets"],
                          ["convert", pkg, "--to", "background-assets", "--out", out, "--download-policy", "sometimes"],
                          ["convert", pkg, "--to", "background-assets", "--out", out, "--platform", "watchOS"]] {
            let result = try CommandRunner.pkgtool(arguments)
            #expect(result.status == 64, "\(arguments): \(result.status) \(result.stderr)")
        }
        #expect(!exists(out))
    }

    // MARK: - Where section 8 is silent (README "Choices")

    /// Equal versions: the same files are one version (the first given is converted); different
    /// files under one version are refused, since which to ship is not for pkgtool to guess.
    @Test func equalVersions() throws {
        let s = try Scratch()
        let a = try s.package("a", id: "com.example.book", version: "1.0", text: ["a.txt": "same\n"])
        let b = try s.package("b", id: "com.example.book", version: "1.0.0", text: ["a.txt": "same\n"])
        let c = try s.package("c", id: "com.example.book", version: "1.0", text: ["a.txt": "different\n"])
        let same = try convert([a, b], out: s.path("same"), ["--json"])
        #expect(same.status == 0, "\(same.stderr)")
        #expect((same.json["packs"] as? [[String: Any]])?.first?["contentVersion"] as? String == "1.0")
        #expect(same.json["superseded"] as? [String] == [b])
        let different = try convert([a, c], out: s.path("different"), ["--json"])
        #expect(different.status == 1)
        #expect(codes(different.json).contains("version-not-bumped"), "\(different.stdout)")
        #expect(!exists(s.path("different")))
    }

    /// A dangling link is a warning: converted, said on stderr, exit 0; `--quiet` prints nothing.
    @Test func warningsDoNotStopAndQuietIsQuiet() throws {
        let s = try Scratch()
        let source = try s.content("src", id: "com.example.book", version: "1.0", files: ["a.txt": "a\n"], links: ["gone": "missing.txt"])
        let result = try convert([source], out: s.path("out"))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("warning[dangling-symlink]"))
        #expect(differences(s.path("out/com-example-book"), expected: snapshot(source)).isEmpty)
        let quiet = try convert([source], out: s.path("out2"), ["--quiet"])
        #expect(quiet.status == 0)
        #expect(quiet.stdout.isEmpty && quiet.stderr.isEmpty, "\(quiet.stdout)\(quiet.stderr)")
    }

    /// README.txt lists every pack in the folder: those of this run and those converted earlier.
    @Test func readmeListsEarlierPacksToo() throws {
        let s = try Scratch()
        let one = try s.package("one", id: "com.example.one", version: "1.0", text: ["a.txt": "a\n"])
        let two = try s.package("two", id: "com.example.two", version: "1.0", text: ["b.txt": "b\n"])
        #expect(try convert([one], out: s.path("out")).status == 0)
        let second = try convert([two], out: s.path("out"))
        #expect(second.status == 0)
        #expect(!second.stdout.contains("com-example-one"), "stdout is about this run")
        let readme = s.text("out/README.txt") ?? ""
        #expect(readme.contains("xcrun ba-package com-example-one.json -o com-example-one.aar"))
        #expect(readme.contains("xcrun ba-package com-example-two.json -o com-example-two.aar"))
    }

    /// A full disk while staging: exit 2, the previous pack and manifest intact, nothing staged left.
    @Test(.enabled(if: Scratch.canMount, "mounting a tmpfs needs root"))
    func fullDiskLeavesThePreviousPack() throws {
        let s = try Scratch()
        let small = try s.package("small", id: "com.example.book", version: "1.0", text: ["a.txt": "a\n"])
        let big = try s.package("big", id: "com.example.book", version: "2.0", files: ["big.bin": randomData(3 << 20)],
                                extraArguments: ["--compression", "none"]).pkg
        let out = try s.mountTmpfs("out", size: "2m")
        #expect(try convert([small], out: out).status == 0)
        let before = snapshot(out)
        let result = try convert([big], out: out, ["--json"])
        #expect(result.status == 2, "\(result.stdout)\(result.stderr)")
        #expect(codes(result.json).contains("io-error"))
        #expect(snapshot(out) == before)
    }

    /// Staging left by a killed conversion (its process gone) is removed by the next one; a live
    /// process's staging is not touched.
    @Test func removesStagingOfDeadRuns() throws {
        let s = try Scratch()
        let pkg = try s.package("p", id: "com.example.book", version: "1.0", text: ["a.txt": "a\n"])
        let gone = try CommandRunner.run("/bin/sh", ["-c", "echo $$"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        try s.write("out/.pkgtool-convert-\(gone)-abc-com-example-book/Contents/x.txt", "left over\n")
        try s.write("out/.pkgtool-convert-\(getpid())-abc-com-example-other/Contents/x.txt", "in progress\n")
        #expect(try convert([pkg], out: s.path("out")).status == 0)
        #expect(s.list("out") == [".pkgtool-convert-\(getpid())-abc-com-example-other", "README.txt", "com-example-book", "com-example-book.json"])
    }

    /// Ctrl-C always ends a conversion, even one blocked opening its input (a FIFO no one
    /// writes), with exit 130, the line that says so, and the output folder as it was.
    @Test func interruptEndsABlockedConversion() throws {
        let s = try Scratch()
        let pkg = try s.package("p", id: "com.example.book", version: "1.0", text: ["a.txt": "a\n"])
        let fifo = s.path("input.pkg")
        try #require(mkfifo(fifo, 0o644) == 0)
        let convert = try BackgroundCommand(["convert", pkg, fifo, "--to", "background-assets", "--out", s.path("out")], in: s)
        let blocked = waitUntil { convert.isWaitingToOpenAFIFO || !convert.isRunning } && convert.isRunning
        try #require(blocked, "the conversion never opened its input")
        convert.send(SIGINT)
        let (result, killed) = convert.finish()
        #expect(!killed && result.status == 130, "\(result.stderr)")
        #expect(result.stderr.contains("convert: interrupted; nothing was converted; \(s.path("out")) is as it was"), "\(result.stderr)")
        #expect(!exists(s.path("out")))
    }
}
