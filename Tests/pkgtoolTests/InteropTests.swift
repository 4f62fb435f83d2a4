import Foundation
import Testing
import TestSupport

/// pkgtool's output read by bsdtar (libarchive), and archives made by bsdtar read by pkgtool.
@Suite(.offThePool) struct InteropTests {
    @Test func bsdtarExtractsEveryPackageWithChecksumsVerified() throws {
        let scratch = try Scratch()
        var random = SystemRandomNumberGenerator()
        try scratch.write("src/Contents/noise.jpg", Data((0..<300_000).map { _ in UInt8.random(in: 0...255, using: &random) }))
        try scratch.write("src/Contents/text/big.txt", String(repeating: "compressible text\n", count: 200_000))
        try scratch.write("src/Contents/empty.txt", "")
        try scratch.write("src/Contents/café.txt", "accent")
        try scratch.write("src/Contents/日本.txt", "kanji")
        try FileManager.default.createSymbolicLink(atPath: scratch.path("src/Contents/link.txt"), withDestinationPath: "text/big.txt")
        try scratch.write("src/ContentInfo.plist", plist(id: "com.example.interop", version: "1.0"))
        for compression in ["auto", "zlib", "none"] {
            let package = "p-\(compression).pkg"
            #expect(try CommandRunner.pkgtool(["create", scratch.path("src"), "--compression", compression, "-o", scratch.path(package)]).status == 0)
            // bsdtar exits non-zero on any checksum or size error; diff proves the bytes.
            try CommandRunner.shell("rm -rf x && mkdir x && bsdtar -xf \(package) -C x && diff -r src x && cat \(package) | bsdtar -tf - >/dev/null", in: scratch.url)
            let verbose = try CommandRunner.shell("bsdtar -tvf \(package)", in: scratch.url).stdout
            for line in verbose.split(separator: "\n") {
                let fields = line.split(separator: " ", omittingEmptySubsequences: true)
                #expect(["-rw-r--r--", "drwxr-xr-x", "lrwxr-xr-x"].contains(String(fields[0])), "\(line)")
                #expect(fields[2] == "0" && fields[3] == "0", "owner names or ids in \(line)")
            }
        }
    }

    @Test func corruptedDataIsCaughtByBsdtarAndPkgtool() throws {
        let scratch = try Scratch()
        let source = try scratch.content("src", files: ["a.txt": String(repeating: "abcdef", count: 1000)])
        #expect(try CommandRunner.pkgtool(["create", source, "-o", scratch.path("c.pkg")]).status == 0)
        var bytes = try scratch.read("c.pkg")
        bytes[bytes.count - 10] ^= 0xFF
        try bytes.write(to: scratch.url.appendingPathComponent("bad.pkg"))
        #expect(try CommandRunner.run("/bin/sh", ["-c", "bsdtar -xOf bad.pkg >/dev/null"], in: scratch.url).status != 0)
        let result = try CommandRunner.pkgtool(["validate", scratch.path("bad.pkg"), "--json"])
        #expect(result.status == 1)
        #expect(!codes(result.json).isDisjoint(with: ["checksum-mismatch", "unreadable-archive"]))
    }

    @Test func packagesMadeByBsdtarValidate() throws {
        let scratch = try Scratch()
        try scratch.content("src", id: "com.example.other", version: "2.5", files: ["a.txt": "aaaa", "d/b.txt": "bb"])
        for (format, name) in [("xar", "x.pkg"), ("zip", "z.pkg"), ("ustar", "t.pkg"), ("pax", "p.pkg")] {
            try CommandRunner.shell("bsdtar --format \(format) -cf \(name) -C src ContentInfo.plist Contents", in: scratch.url)
            let result = try CommandRunner.pkgtool(["validate", scratch.path(name), "--json"])
            #expect(result.status == 0, "\(format): \(result.stdout)")
            let package = (result.json["packages"] as? [[String: Any]])?.first ?? [:]
            #expect(package["productIdentifier"] as? String == "com.example.other")
            #expect(package["contentVersion"] as? String == "2.5")
            #expect(package["fileCount"] as? Int == 2)
            #expect(package["payloadBytes"] as? Int == 6)
        }
        try CommandRunner.shell("cd src && bsdtar --format ustar -czf ../g.pkg ContentInfo.plist Contents", in: scratch.url)
        #expect(try CommandRunner.pkgtool(["validate", scratch.path("g.pkg")]).status == 0)
    }

    @Test func flatInstallerPackagePayloadIsTheRoot() throws {
        let scratch = try Scratch()
        try scratch.content("payload", id: "com.example.flat", version: "1.0", files: ["a.txt": "flat"])
        try scratch.write("flat/Distribution", "<installer-gui-script minSpecVersion=\"1\"/>")
        try scratch.write("flat/comp.pkg/PackageInfo", "<pkg-info/>")
        try CommandRunner.shell("cd payload && find . | sort | bsdtar --format odc -n -cf - -T - | gzip -n > ../flat/comp.pkg/Payload && cd ../flat && bsdtar --format xar -cf ../installer.pkg Distribution comp.pkg", in: scratch.url)
        let result = try CommandRunner.pkgtool(["validate", scratch.path("installer.pkg"), "--json"])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let package = (result.json["packages"] as? [[String: Any]])?.first ?? [:]
        #expect(package["format"] as? String == "flat-package")
        #expect(package["productIdentifier"] as? String == "com.example.flat")
        #expect(package["fileCount"] as? Int == 1)
    }

    /// libarchive's own xar writer, given one path twice, merges the copies into one entry whose
    /// declared length covers both; libarchive 3.6.2 then hangs (`-xf`) or reports truncation.
    /// Async, so that its minute is not spent waiting for a thread behind other tests' children.
    @Test(.timeLimit(.minutes(2))) func bsdtarPathGivenTwiceIsADuplicateNotAHang() async throws {
        let scratch = try Scratch()
        try scratch.content("src", files: ["a.txt": String(repeating: "some text ", count: 300), "b.txt": "b"])
        try await CommandRunner.shell("cd src && bsdtar --format xar -cf ../dup.pkg ContentInfo.plist Contents Contents/a.txt", in: scratch.url)
        let result = try await CommandRunner.pkgtool(["validate", scratch.path("dup.pkg"), "--json"])
        #expect(result.status == 1)
        let package = (result.json["packages"] as? [[String: Any]])?.first ?? [:]
        let found = (package["diagnostics"] as? [[String: Any]] ?? []).map { ($0["code"] as? String ?? "", $0["path"] as? String ?? "") }
        #expect(found.contains { $0 == ("duplicate-entry", "Contents/a.txt") }, "\(found)")
        #expect(!found.contains { $0.0 == "missing-contents" })
    }

    /// Archives from other writers than libarchive: Python's zipfile and tarfile.
    @Test func packagesMadeByPythonValidate() throws {
        let scratch = try Scratch()
        try scratch.content("src", id: "com.example.python", version: "3.0", files: ["a.txt": "aaaa", "d/b.txt": "bb", "d/e/c.txt": "c"])
        try CommandRunner.shell("""
            python3 - <<'PY'
            import os, tarfile, zipfile
            os.chdir("src")
            names = ["ContentInfo.plist", "Contents", "Contents/a.txt", "Contents/d", "Contents/d/b.txt", "Contents/d/e", "Contents/d/e/c.txt"]
            with zipfile.ZipFile("../py.pkg", "w", zipfile.ZIP_DEFLATED) as z:
                for n in names:
                    z.write(n)
            with tarfile.open("../py-tar.pkg", "w:gz", format=tarfile.GNU_FORMAT) as t:
                for n in names:
                    t.add(n, recursive=False)
            PY
            """, in: scratch.url)
        for name in ["py.pkg", "py-tar.pkg"] {
            let result = try CommandRunner.pkgtool(["validate", scratch.path(name), "--json"])
            #expect(result.status == 0, "\(name): \(result.stdout)")
            let package = (result.json["packages"] as? [[String: Any]])?.first ?? [:]
            #expect(package["productIdentifier"] as? String == "com.example.python")
            #expect(package["fileCount"] as? Int == 3)
            #expect(package["payloadBytes"] as? Int == 7)
        }
    }
}
