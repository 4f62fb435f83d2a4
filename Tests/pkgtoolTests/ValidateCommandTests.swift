import Crypto
import Foundation
import Testing
import TestSupport

/// `pkgtool validate`, `inspect` and `diff` end to end.
@Suite(.offThePool) struct ValidateCommandTests {
    @Test func textOutputHasOneLinePerDiagnosticAndASummary() throws {
        let scratch = try Scratch()
        try scratch.content("bad", id: "com.example.bad", version: "1.0", files: ["a.txt": "a"])
        try scratch.write("bad/Contents/.DS_Store", "junk")
        try scratch.write("bad/README", "stray")
        let result = try CommandRunner.pkgtool(["validate", scratch.path("bad")])
        #expect(result.status == 1)
        let lines = result.stderr.split(separator: "\n").map(String.init)
        #expect(lines.contains("error[outside-contents] README: only ContentInfo.plist and Contents/ may be at the package root: move this into Contents/ or remove it"))
        #expect(lines.contains { $0.hasPrefix("warning[junk-file] Contents/.DS_Store: ") })
        #expect(result.stdout.contains("INVALID"))
        #expect(result.stdout.contains("1 error, 1 warning"))
    }

    @Test func jsonShapeAndStrict() throws {
        let scratch = try Scratch()
        try scratch.content("warn", files: ["a.txt": "a"])
        try scratch.write("warn/Contents/Thumbs.db", "junk")
        let plain = try CommandRunner.pkgtool(["validate", scratch.path("warn"), "--json"])
        #expect(plain.status == 0)
        #expect(plain.stderr.isEmpty)
        let json = plain.json
        #expect(json["valid"] as? Bool == true)
        let package = (json["packages"] as? [[String: Any]])?.first ?? [:]
        for key in ["path", "valid", "format", "productIdentifier", "contentVersion", "fileCount", "payloadBytes", "archiveBytes", "diagnostics"] {
            #expect(package.keys.contains(key), "missing \(key)")
        }
        #expect(package["archiveBytes"] is NSNull)
        #expect(package["format"] as? String == "folder")
        let diagnostic = (package["diagnostics"] as? [[String: Any]])?.first ?? [:]
        #expect(Set(diagnostic.keys) == ["code", "severity", "path", "message"])
        #expect(diagnostic["severity"] as? String == "warning")
        let strict = try CommandRunner.pkgtool(["validate", scratch.path("warn"), "--json", "--strict"])
        #expect(strict.status == 1)
        #expect(strict.json["valid"] as? Bool == false)
    }

    @Test func exitCodes() throws {
        let scratch = try Scratch()
        let good = try scratch.content("good")
        #expect(try CommandRunner.pkgtool(["validate", good]).status == 0)
        #expect(try CommandRunner.pkgtool(["validate", scratch.path("missing.pkg")]).status == 2)
        #expect(try CommandRunner.pkgtool(["validate"]).status == 64)
        #expect(try CommandRunner.pkgtool(["validate", good, "--max-size", "abc"]).status == 64)
        #expect(try CommandRunner.pkgtool(["validate", good, "--previous-version", "01"]).status == 64)
        try scratch.write("junk.pkg", "this is not an archive at all")
        let junk = try CommandRunner.pkgtool(["validate", scratch.path("junk.pkg"), "--json"])
        #expect(junk.status == 1)
        #expect(codes(junk.json) == ["unreadable-archive"])
    }

    @Test func productIdAndPreviousVersionFlags() throws {
        let scratch = try Scratch()
        let good = try scratch.content("good", id: "com.example.v", version: "1.5")
        let wrongID = try CommandRunner.pkgtool(["validate", good, "--product-id", "com.example.other", "--json"])
        #expect(codes(wrongID.json) == ["product-identifier-mismatch"])
        let older = try CommandRunner.pkgtool(["validate", good, "--previous-version", "1.5", "--json"])
        #expect(codes(older.json) == ["version-not-bumped"])
        #expect(try CommandRunner.pkgtool(["validate", good, "--previous-version", "1.4.9"]).status == 0)
        #expect(try CommandRunner.pkgtool(["validate", good, "--previous", good]).status == 1)
    }

    /// A previous package without a version to compare with stops the run before any package is
    /// judged: exit 2, `unreadable-input` on the previous package, every path listed unchecked.
    @Test func aPreviousPackageWithoutAVersionFailsTheRun() throws {
        let scratch = try Scratch()
        let good = try scratch.content("good", id: "com.example.v", version: "1.5")
        try scratch.write("old/Contents/a.txt", "a")
        let result = try CommandRunner.pkgtool(["validate", good, "--previous", scratch.path("old"), "--json"])
        #expect(result.status == 2, "\(result.stdout)\(result.stderr)")
        let diagnostic = (result.json["diagnostics"] as? [[String: Any]])?.first ?? [:]
        #expect(diagnostic["code"] as? String == "unreadable-input")
        #expect(diagnostic["path"] as? String == scratch.path("old"))
        #expect(diagnostic["message"] as? String == "the previous package has no readable ContentInfo.plist")
        let packages = result.json["packages"] as? [[String: Any]] ?? []
        #expect(packages.map { $0["path"] as? String } == [good])
        #expect(packages.first?["valid"] as? Bool == false)
    }

    @Test func badExtensionOnlyForArchives() throws {
        let scratch = try Scratch()
        let source = try scratch.content("src")
        #expect(try CommandRunner.pkgtool(["create", source, "-o", scratch.path("a.pkg")]).status == 0)
        try FileManager.default.copyItem(atPath: scratch.path("a.pkg"), toPath: scratch.path("a.zip"))
        let renamed = try CommandRunner.pkgtool(["validate", scratch.path("a.zip"), "--json"])
        #expect(codes(renamed.json) == ["bad-extension"])
        let created = try CommandRunner.pkgtool(["create", source, "-o", scratch.path("a.xar"), "--json"])
        #expect(created.status == 1)
        #expect(codes(created.json) == ["bad-extension"])
    }

    @Test func inspectReportsProductFormatAndFiles() throws {
        let scratch = try Scratch()
        let source = try scratch.content("src", id: "com.example.i", version: "4.2", files: ["a.txt": String(repeating: "a", count: 5000)])
        #expect(try CommandRunner.pkgtool(["create", source, "-o", scratch.path("i.pkg")]).status == 0)
        let json = try CommandRunner.pkgtool(["inspect", scratch.path("i.pkg"), "--files", "--json"]).json
        #expect(json["productIdentifier"] as? String == "com.example.i")
        #expect(json["contentVersion"] as? String == "4.2")
        #expect(json["format"] as? String == "xar")
        #expect(json["checksum"] as? String == "sha1")
        #expect(json["compression"] as? String == "zlib")
        #expect(json["fileCount"] as? Int == 1)
        #expect(json["payloadBytes"] as? Int == 5000)
        let file = (json["files"] as? [[String: Any]])?.first { $0["path"] as? String == "Contents/a.txt" } ?? [:]
        #expect(file["type"] as? String == "file")
        #expect(file["size"] as? Int == 5000)
        #expect((file["storedSize"] as? Int ?? 5000) < 5000)
        let expected = Insecure.SHA1.hash(data: Data(String(repeating: "a", count: 5000).utf8)).map { String(format: "%02x", $0) }.joined()
        #expect(file["sha1"] as? String == expected)
        let text = try CommandRunner.pkgtool(["inspect", scratch.path("i.pkg")])
        #expect(text.status == 0)
        #expect(text.stdout.contains("com.example.i") && text.stdout.contains("4.2"))
    }

    @Test func diffComparesByContentAndGivesAVerdict() throws {
        let scratch = try Scratch()
        try scratch.content("v1", id: "com.example.d", version: "1.0", files: ["same.txt": "same", "changed.txt": "old", "gone.txt": "bye"])
        try scratch.content("v2", id: "com.example.d", version: "1.1", files: ["same.txt": "same", "changed.txt": "new", "added.txt": "hi"])
        // A new mtime on an unchanged file must not count as a change.
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 5)], ofItemAtPath: scratch.path("v2/Contents/same.txt"))
        #expect(try CommandRunner.pkgtool(["create", scratch.path("v1"), "-o", scratch.path("v1.pkg")]).status == 0)
        let ok = try CommandRunner.pkgtool(["diff", scratch.path("v1.pkg"), scratch.path("v2"), "--json"])
        #expect(ok.status == 0)
        let json = ok.json
        #expect(json["added"] as? [String] == ["added.txt"])
        #expect(json["removed"] as? [String] == ["gone.txt"])
        #expect(json["changed"] as? [String] == ["changed.txt"])
        #expect(json["verdict"] as? String == "ok")
        #expect((json["old"] as? [String: Any])?["contentVersion"] as? String == "1.0")
        #expect((json["new"] as? [String: Any])?["productIdentifier"] as? String == "com.example.d")
        let backwards = try CommandRunner.pkgtool(["diff", scratch.path("v2"), scratch.path("v1.pkg"), "--json"])
        #expect(backwards.status == 1)
        #expect(backwards.json["verdict"] as? String == "version-not-bumped")
        try scratch.content("v1b", id: "com.example.d", version: "1.2", files: ["same.txt": "same", "changed.txt": "old", "gone.txt": "bye"])
        #expect(try CommandRunner.pkgtool(["diff", scratch.path("v1"), scratch.path("v1b"), "--json"]).json["verdict"] as? String == "content-unchanged")
        try scratch.content("other", id: "com.example.e", version: "2.0")
        #expect(try CommandRunner.pkgtool(["diff", scratch.path("v1"), scratch.path("other"), "--json"]).json["verdict"] as? String == "product-identifier-mismatch")
    }

    @Test func noProgressBarWhenStderrIsNotATerminal() throws {
        let scratch = try Scratch()
        var random = SystemRandomNumberGenerator()
        try scratch.write("src/Contents/big.bin", Data((0..<3_000_000).map { _ in UInt8.random(in: 0...255, using: &random) }))
        try scratch.write("src/ContentInfo.plist", plist(id: "com.example.bar", version: "1.0"))
        let create = try CommandRunner.pkgtool(["create", scratch.path("src"), "-o", scratch.path("b.pkg"), "--level", "9", "--compression", "zlib"])
        #expect(create.status == 0)
        #expect(!create.stderr.contains("\r"))
        let validate = try CommandRunner.pkgtool(["validate", scratch.path("b.pkg")])
        #expect(validate.stderr.isEmpty)
    }

    @Test(.timeLimit(.minutes(2))) func twentyThousandEntriesValidateInFlatMemory() throws {
        let scratch = try Scratch()
        try scratch.write("src/ContentInfo.plist", plist(id: "com.example.many", version: "1.0"))
        try CommandRunner.shell("""
            python3 - <<'PY'
            import os
            for d in range(40):
                os.makedirs(f"src/Contents/d{d}", exist_ok=True)
                for f in range(500):
                    with open(f"src/Contents/d{d}/f{f}.txt", "w") as out:
                        out.write(f"file {d}/{f}\\n")
            PY
            """, in: scratch.url)
        #expect(try CommandRunner.pkgtool(["create", scratch.path("src"), "-o", scratch.path("many.pkg")]).status == 0)
        let measured = try CommandRunner.shell("""
            python3 -c 'import resource,subprocess,sys; r=subprocess.run(sys.argv[1:]).returncode; print(r, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' \(CommandRunner.pkgtool) validate many.pkg --quiet
            """, in: scratch.url).stdout.split(separator: " ").compactMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        #expect(measured.first == 0)
        // 20,000 entries of facts plus libarchive's parsed TOC: well under 150 MB, and nothing
        // proportional to the payload.
        #expect((measured.last ?? .max) < 150_000, "peak RSS \(measured.last ?? -1) KB")
    }

    /// With `--strict`, a package invalid only for its warnings says so (issue 21, item 15: it
    /// said `INVALID — 0 errors, 2 warnings` and no more).
    @Test func strictSaysTheWarningsMadeItInvalid() throws {
        let scratch = try Scratch()
        try scratch.content("warn", files: ["a.txt": "a"])
        try scratch.write("warn/Contents/Thumbs.db", "junk")
        let strict = try CommandRunner.pkgtool(["validate", scratch.path("warn"), "--strict"])
        #expect(strict.status == 1)
        #expect(strict.stdout.contains("INVALID (--strict: warnings count as errors)"), "\(strict.stdout)")
        let plain = try CommandRunner.pkgtool(["validate", scratch.path("warn")])
        #expect(plain.status == 0)
        #expect(!plain.stdout.contains("--strict"))
    }
}
