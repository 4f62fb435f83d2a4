import Crypto
import Foundation
import PkgKit
import Testing
import TestSupport

/// `pkgtool create` end to end: every flag, exit codes and the JSON shape.
@Suite(.offThePool) struct CreateCommandTests {
    @Test func structuredSourceMakesPackageNamedAfterProductAndVersion() throws {
        let scratch = try Scratch()
        let source = try scratch.content("src", id: "com.example.book.ch1", files: ["chapter.txt": "Once upon a time\n", "art/pic.bin": "pixels"])
        let result = try CommandRunner.pkgtool(["create", source, "--json"], in: scratch.url)
        #expect(result.status == 0, "\(result.stderr)")
        let json = result.json
        #expect(json["output"] as? String == "./com.example.book.ch1-1.0.pkg")
        #expect(json["productIdentifier"] as? String == "com.example.book.ch1")
        #expect(json["contentVersion"] as? String == "1.0")
        #expect(json["fileCount"] as? Int == 2)
        #expect(json["payloadBytes"] as? Int == 23)
        #expect(json["format"] as? String == "xar")
        let bytes = try scratch.read("com.example.book.ch1-1.0.pkg")
        #expect(json["archiveBytes"] as? Int == bytes.count)
        #expect(json["sha256"] as? String == SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined())
        for key in ["output", "format", "productIdentifier", "contentVersion", "fileCount", "payloadBytes", "archiveBytes", "sha256", "skipped", "diagnostics"] {
            #expect(json.keys.contains(key), "missing \(key)")
        }
        #expect(bytes.prefix(4) == Data("xar!".utf8))
    }

    @Test func plainFolderWithFlagsBecomesContents() throws {
        let scratch = try Scratch()
        try scratch.write("plain/level1.dat", "level data")
        let result = try CommandRunner.pkgtool(["create", scratch.path("plain"), "--product-id", "com.example.level1", "--content-version", "2.0", "-o", scratch.path("out.pkg"), "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let listing = try CommandRunner.shell("bsdtar -tf '\(scratch.path("out.pkg"))'").stdout
        #expect(listing.split(separator: "\n").map(String.init) == ["ContentInfo.plist", "Contents", "Contents/level1.dat"])
        let extracted = try CommandRunner.shell("bsdtar -xOf '\(scratch.path("out.pkg"))' ContentInfo.plist").stdout
        #expect(extracted.contains("<string>com.example.level1</string>"))
        #expect(extracted.contains("<string>2.0</string>"))
    }

    @Test func plistFlagSuppliesContentInfo() throws {
        let scratch = try Scratch()
        try scratch.write("plain/x.txt", "x")
        try scratch.write("info.plist", plist(id: "com.example.fromflag", version: "3.1"))
        let result = try CommandRunner.pkgtool(["create", scratch.path("plain"), "--plist", scratch.path("info.plist"), "--json"], in: scratch.url)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.json["productIdentifier"] as? String == "com.example.fromflag")
        #expect(FileManager.default.fileExists(atPath: scratch.path("com.example.fromflag-3.1.pkg")))
    }

    @Test func disagreeingFlagsAreErrorsNamingBothValues() throws {
        let scratch = try Scratch()
        let source = try scratch.content("src", id: "com.example.a", version: "1.0")
        let id = try CommandRunner.pkgtool(["create", source, "--product-id", "com.example.b", "-o", scratch.path("o.pkg")])
        #expect(id.status == 1)
        #expect(id.stderr.contains("error[product-identifier-mismatch]"))
        #expect(id.stderr.contains("com.example.a") && id.stderr.contains("com.example.b"))
        let version = try CommandRunner.pkgtool(["create", source, "--content-version", "2.0", "-o", scratch.path("o.pkg"), "--json"])
        #expect(version.status == 1)
        #expect(codes(version.json) == ["content-version-mismatch"])
        #expect(version.json["output"] is NSNull)
        #expect(!FileManager.default.fileExists(atPath: scratch.path("o.pkg")))
    }

    @Test func badFlagValuesThatBreakRulesExitOne() throws {
        let scratch = try Scratch()
        try scratch.write("plain/x.txt", "x")
        let version = try CommandRunner.pkgtool(["create", scratch.path("plain"), "--product-id", "com.example.x", "--content-version", "01", "-o", scratch.path("o.pkg"), "--json"])
        #expect(version.status == 1)
        #expect(codes(version.json).contains("invalid-content-version"))
        let id = try CommandRunner.pkgtool(["create", scratch.path("plain"), "--product-id", "a/b", "--content-version", "1.0", "-o", scratch.path("o.pkg"), "--json"])
        #expect(id.status == 1)
        #expect(codes(id.json).contains("invalid-product-identifier"))
    }

    @Test func usageErrorsExit64() throws {
        let scratch = try Scratch()
        let source = try scratch.content("src")
        for arguments in [["--level", "12"], ["--bump", "huge"], ["--max-size", "abc"], ["--compression", "xz"], ["--format", "rar"], ["--jobs", "0"], ["--no-such-flag"]] {
            let result = try CommandRunner.pkgtool(["create", source, "-o", scratch.path("o.pkg")] + arguments)
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
        }
        #expect(try CommandRunner.pkgtool(["create"]).status == 64)
    }

    @Test func missingSourceExitsTwo() throws {
        let scratch = try Scratch()
        let result = try CommandRunner.pkgtool(["create", scratch.path("nope"), "-o", scratch.path("o.pkg")])
        #expect(result.status == 2)
        #expect(result.stderr.contains("nope"))
    }

    @Test func previousAndBump() throws {
        let scratch = try Scratch()
        let old = try scratch.content("v1", id: "com.example.p", version: "1.2", files: ["a.txt": "one"])
        #expect(try CommandRunner.pkgtool(["create", old, "-o", scratch.path("v1.pkg")]).status == 0)
        try scratch.content("v2", id: "com.example.p", version: "1.2", files: ["a.txt": "two"])
        for (part, expected) in [("major", "2.0"), ("minor", "1.3"), ("patch", "1.2.1")] {
            let result = try CommandRunner.pkgtool(["create", scratch.path("v2"), "--previous", scratch.path("v1.pkg"), "--bump", part, "-o", scratch.path("v2-\(part).pkg"), "--json"])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.json["contentVersion"] as? String == expected)
            let record = try CommandRunner.shell("bsdtar -xOf '\(scratch.path("v2-\(part).pkg"))' ContentInfo.plist").stdout
            #expect(record.contains("<string>\(expected)</string>"))
        }
        // Same version as the previous package: refused, nothing written.
        let same = try CommandRunner.pkgtool(["create", scratch.path("v2"), "--previous", scratch.path("v1.pkg"), "-o", scratch.path("same.pkg"), "--json"])
        #expect(same.status == 1)
        #expect(codes(same.json) == ["version-not-bumped"])
        #expect(!FileManager.default.fileExists(atPath: scratch.path("same.pkg")))
        // Another product: refused.
        try scratch.content("other", id: "com.example.other", version: "9.0")
        let other = try CommandRunner.pkgtool(["create", scratch.path("other"), "--previous", scratch.path("v1.pkg"), "-o", scratch.path("other.pkg"), "--json"])
        #expect(codes(other.json) == ["product-identifier-mismatch"])
        // Bumped but identical payload: written, with a warning.
        let unchanged = try CommandRunner.pkgtool(["create", old, "--previous", scratch.path("v1.pkg"), "--bump", "patch", "-o", scratch.path("same-content.pkg"), "--json"])
        #expect(unchanged.status == 0)
        #expect(codes(unchanged.json) == ["content-unchanged"])
    }

    @Test func compressionModesShowInTheTableOfContents() throws {
        let scratch = try Scratch()
        var random = SystemRandomNumberGenerator()
        let noise = Data((0..<200_000).map { _ in UInt8.random(in: 0...255, using: &random) })
        try scratch.write("src/Contents/noise.bin", noise)
        try scratch.write("src/Contents/text.txt", String(repeating: "the same line of text again\n", count: 5000))
        try scratch.write("src/ContentInfo.plist", plist(id: "com.example.c", version: "1.0"))
        func encodings(_ mode: String) throws -> [String: String] {
            let out = scratch.path("\(mode).pkg")
            let result = try CommandRunner.pkgtool(["create", scratch.path("src"), "--compression", mode, "--level", "9", "-o", out])
            #expect(result.status == 0, "\(result.stderr)")
            let inspect = try CommandRunner.pkgtool(["inspect", out, "--files", "--json"]).json
            var map: [String: String] = [:]
            for file in inspect["files"] as? [[String: Any]] ?? [] {
                if let path = file["path"] as? String, let size = file["size"] as? Int, let stored = file["storedSize"] as? Int, size > 0 {
                    map[path] = stored < size ? "compressed" : "stored"
                }
            }
            return map
        }
        #expect(try encodings("auto") == ["Contents/noise.bin": "stored", "Contents/text.txt": "compressed", "ContentInfo.plist": "compressed"])
        #expect(try encodings("none").values.allSatisfy { $0 == "stored" })
        #expect(try encodings("zlib")["Contents/text.txt"] == "compressed")
    }

    @Test func zipFormatIsReadableByBsdtar() throws {
        let scratch = try Scratch()
        let source = try scratch.content("src", files: ["a.txt": "alpha\n", "sub/b.txt": "beta\n"])
        let result = try CommandRunner.pkgtool(["create", source, "--format", "zip", "-o", scratch.path("z.pkg"), "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try scratch.read("z.pkg").prefix(2) == Data("PK".utf8))
        #expect(result.json["sha256"] as? String == SHA256.hash(data: try scratch.read("z.pkg")).map { String(format: "%02x", $0) }.joined())
        try CommandRunner.shell("mkdir x && bsdtar -xf z.pkg -C x && diff -r x/Contents src/Contents", in: scratch.url)
        let again = try CommandRunner.pkgtool(["create", source, "--format", "zip", "-o", scratch.path("z2.pkg")], environment: ["TZ": "America/New_York"])
        #expect(again.status == 0)
        #expect(try scratch.read("z.pkg") == scratch.read("z2.pkg"))
        let validate = try CommandRunner.pkgtool(["validate", scratch.path("z.pkg"), "--json"])
        #expect(validate.status == 0, "\(validate.stdout)")
        // --compression none stores every member (method 0), zlib deflates (method 8).
        for (mode, method) in [("none", 0), ("zlib", 8)] {
            #expect(try CommandRunner.pkgtool(["create", source, "--format", "zip", "--compression", mode, "-o", scratch.path("\(mode).pkg")]).status == 0)
            let methods = try CommandRunner.shell("python3 -c \"import zipfile; print(sorted({i.compress_type for i in zipfile.ZipFile('\(mode).pkg').infolist() if i.file_size}))\"", in: scratch.url).stdout
            #expect(methods.trimmingCharacters(in: .whitespacesAndNewlines) == "[\(method)]", "\(mode): \(methods)")
        }
    }

    @Test func maxSizeRefusesLargePayload() throws {
        let scratch = try Scratch()
        let source = try scratch.content("src", files: ["big.txt": String(repeating: "x", count: 10_000)])
        let result = try CommandRunner.pkgtool(["create", source, "--max-size", "5000", "-o", scratch.path("o.pkg"), "--json"])
        #expect(result.status == 1)
        #expect(codes(result.json).contains("size-limit"))
        #expect(!FileManager.default.fileExists(atPath: scratch.path("o.pkg")))
    }

    @Test func junkIsSkippedAndReported() throws {
        let scratch = try Scratch()
        let source = try scratch.content("src")
        try scratch.write("src/Contents/.DS_Store", "junk")
        try scratch.write("src/Contents/.git/config", "[core]")
        let result = try CommandRunner.pkgtool(["create", source, "-o", scratch.path("o.pkg"), "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(Set(result.json["skipped"] as? [String] ?? []) == ["Contents/.DS_Store", "Contents/.git"])
        let listing = try CommandRunner.shell("bsdtar -tf '\(scratch.path("o.pkg"))'").stdout
        #expect(!listing.contains(".DS_Store") && !listing.contains(".git"))
    }

    @Test func executeBitsAreClearedOnContentButCodeIsRefused() throws {
        let scratch = try Scratch()
        let source = try scratch.content("src")
        try scratch.write("src/Contents/run.txt", "not code", mode: 0o755)
        let ok = try CommandRunner.pkgtool(["create", source, "-o", scratch.path("o.pkg"), "--json"])
        #expect(ok.status == 0)
        #expect(codes(ok.json) == ["executable-permission"])
        let listing = try CommandRunner.shell("bsdtar -tvf '\(scratch.path("o.pkg"))' Contents/run.txt").stdout
        #expect(listing.hasPrefix("-rw-r--r--"))
        try scratch.write("src/Contents/tool.sh", "#!/bin/sh\necho hi\n")
        let code = try CommandRunner.pkgtool(["create", source, "-o", scratch.path("o2.pkg"), "--json"])
        #expect(code.status == 1)
        #expect(codes(code.json).contains("executable-code"))
    }

    @Test func codeAnywhereAmongManyFilesIsFoundWhateverTheJobs() throws {
        let scratch = try Scratch()
        let source = try scratch.content("src")
        // 1,200 files: the search for code hands them out to threads 256 at a time.
        for index in 0..<1_200 { try scratch.write("src/Contents/d\(index / 300)/f\(index).txt", "plain text \(index)\n") }
        var pe = [UInt8](repeating: 0, count: 0x200)
        pe[0] = UInt8(ascii: "M"); pe[1] = UInt8(ascii: "Z"); pe[0x3C] = 0x80
        pe.replaceSubrange(0x80..<0x84, with: Array("PE\0\0".utf8))
        try scratch.write("src/Contents/d0/f7.txt", [0x7F, 0x45, 0x4C, 0x46, 2, 1, 1, 0])
        try scratch.write("src/Contents/d2/f700.txt", pe)
        try scratch.write("src/Contents/d3/f1199.txt", "#!/bin/sh\necho hi\n")
        for jobs in ["1", "2", "4"] {
            let result = try CommandRunner.pkgtool(["create", source, "--jobs", jobs, "-o", scratch.path("o.pkg"), "--json"])
            #expect(result.status == 1, "--jobs \(jobs)")
            let found = (result.json["diagnostics"] as? [[String: Any]] ?? []).filter { $0["code"] as? String == "executable-code" }
            #expect(Set(found.compactMap { $0["path"] as? String }) == ["Contents/d0/f7.txt", "Contents/d2/f700.txt", "Contents/d3/f1199.txt"], "--jobs \(jobs)")
            #expect(!FileManager.default.fileExists(atPath: scratch.path("o.pkg")))
        }
    }

    /// A Windows executable's header may lie far into the file: found past the first bytes read
    /// of every file, up to `ExecutableFormat.headBytes`.
    @Test func aWindowsHeaderFarIntoTheFileIsFound() throws {
        let scratch = try Scratch()
        let source = try scratch.content("src")
        func pe(headerAt offset: Int) -> [UInt8] {
            var bytes = [UInt8](repeating: 0x20, count: offset + 0x200)
            bytes[0] = UInt8(ascii: "M"); bytes[1] = UInt8(ascii: "Z")
            for index in 0..<4 { bytes[0x3C + index] = UInt8(truncatingIfNeeded: offset >> (8 * index)) }
            bytes.replaceSubrange(offset..<offset + 4, with: Array("PE\0\0".utf8))
            return bytes
        }
        try scratch.write("src/Contents/near.dat", pe(headerAt: 0x80))
        try scratch.write("src/Contents/far.dat", pe(headerAt: 0x9000))
        // Across the end of the 4 KiB read from every file.
        try scratch.write("src/Contents/edge.dat", pe(headerAt: 4094))
        let result = try CommandRunner.pkgtool(["create", source, "-o", scratch.path("o.pkg"), "--json"])
        #expect(result.status == 1)
        let found = (result.json["diagnostics"] as? [[String: Any]] ?? []).filter { $0["code"] as? String == "executable-code" }
        #expect(Set(found.compactMap { $0["path"] as? String }) == ["Contents/near.dat", "Contents/far.dat", "Contents/edge.dat"])
    }

    @Test func smallStoredFilesAmongCompressedOnesComeBackWhole() throws {
        let scratch = try Scratch()
        let source = try scratch.content("src")
        // Random bytes do not compress, so these are stored: small ones in between compressed
        // text files, a large one (read again from its source) in the middle.
        var generator = SystemRandomNumberGenerator()
        for index in 0..<300 {
            if index % 3 == 0 {
                try scratch.write("src/Contents/f\(index).bin", (0..<(50 + index * 7)).map { _ in UInt8.random(in: 0...255, using: &generator) })
            } else {
                try scratch.write("src/Contents/f\(index).txt", String(repeating: "line \(index)\n", count: index + 1))
            }
        }
        try scratch.write("src/Contents/f150.bin", (0..<300_000).map { _ in UInt8.random(in: 0...255, using: &generator) })
        for jobs in ["1", "2"] {
            #expect(try CommandRunner.pkgtool(["create", source, "--jobs", jobs, "-o", scratch.path("j\(jobs).pkg")]).status == 0)
        }
        #expect(try scratch.read("j1.pkg") == scratch.read("j2.pkg"))
        #expect(try CommandRunner.pkgtool(["validate", scratch.path("j1.pkg")]).status == 0)
        try CommandRunner.shell("mkdir x && bsdtar -xf j1.pkg -C x && diff -r x src", in: scratch.url)
    }

    @Test func helpAndVersionDocumentTheCommands() throws {
        let help = try CommandRunner.pkgtool(["--help"])
        #expect(help.status == 0)
        for command in ["create", "validate", "extract", "inspect", "diff"] { #expect(help.stdout.contains(command)) }
        let createHelp = try CommandRunner.pkgtool(["help", "create"])
        for flag in ["--plist", "--product-id", "--content-version", "--previous", "--bump", "--compression", "--level", "--format", "--max-size", "--jobs", "--json", "--quiet", "--output"] {
            #expect(createHelp.stdout.contains(flag), "help create lacks \(flag)")
        }
        #expect(try CommandRunner.pkgtool(["--version"]).stdout.contains("."))
    }

    @Test func quietPrintsNothingOnSuccess() throws {
        let scratch = try Scratch()
        let source = try scratch.content("src")
        let result = try CommandRunner.pkgtool(["create", source, "-o", scratch.path("o.pkg"), "--quiet"])
        #expect(result.status == 0)
        #expect(result.stdout.isEmpty && result.stderr.isEmpty)
    }

    @Test func levelTradesSizeForSpeed() throws {
        let scratch = try Scratch()
        var lines = ""
        for index in 0..<20_000 { lines += "record \(index), value \(index * 7919 % 1000), name item-\(index % 97)\n" }
        let source = try scratch.content("src", files: ["data.csv": lines])
        var sizes: [Int] = []
        for level in ["1", "9"] {
            let result = try CommandRunner.pkgtool(["create", source, "--level", level, "-o", scratch.path("l\(level).pkg"), "--json"])
            #expect(result.status == 0)
            sizes.append(result.json["archiveBytes"] as? Int ?? 0)
        }
        #expect(sizes[1] < sizes[0], "level 9 should be smaller than level 1: \(sizes)")
        // The default is WriteOptions.defaultLevel (5), byte for byte.
        let level = String(WriteOptions.defaultLevel)
        #expect(try CommandRunner.pkgtool(["create", source, "-o", scratch.path("default.pkg")]).status == 0)
        #expect(try CommandRunner.pkgtool(["create", source, "--level", level, "-o", scratch.path("level-default.pkg")]).status == 0)
        #expect(FileManager.default.contents(atPath: scratch.path("default.pkg")) == FileManager.default.contents(atPath: scratch.path("level-default.pkg")))
        // Every level, fast ones included, is a zlib stream bsdtar reads back, the same for every --jobs.
        for level in 1...9 {
            let one = scratch.path("j1-\(level).pkg"), two = scratch.path("j2-\(level).pkg")
            #expect(try CommandRunner.pkgtool(["create", source, "--level", String(level), "--jobs", "1", "-o", one]).status == 0)
            #expect(try CommandRunner.pkgtool(["create", source, "--level", String(level), "--jobs", "2", "-o", two]).status == 0)
            #expect(FileManager.default.contents(atPath: one) == FileManager.default.contents(atPath: two), "level \(level)")
            try CommandRunner.shell("mkdir x\(level) && bsdtar -xf j1-\(level).pkg -C x\(level) && diff -r x\(level) src", in: scratch.url)
        }
        #expect(FileManager.default.contents(atPath: scratch.path("default.pkg")) != FileManager.default.contents(atPath: scratch.path("l9.pkg")))
        try CommandRunner.shell("mkdir x && bsdtar -xf l1.pkg -C x && diff -r x src", in: scratch.url)
    }

    /// `--previous OLD --bump minor` on a plain folder takes the product id from OLD (issue 21,
    /// item 6: it asked for --product-id, about a version that was not given).
    @Test func previousGivesThePlainFolderItsProductID() throws {
        let s = try Scratch()
        try s.write("art/a.txt", "one")
        let first = try CommandRunner.pkgtool(["create", s.path("art"), "--product-id", "com.example.art", "--content-version", "1.0"], in: s.url)
        #expect(first.status == 0, "\(first.stderr)")
        try s.write("art/a.txt", "two")
        let next = try CommandRunner.pkgtool(["create", s.path("art"), "--previous", "com.example.art-1.0.pkg", "--bump", "minor", "--json"], in: s.url)
        #expect(next.status == 0, "\(next.stdout)\(next.stderr)")
        #expect(next.json["productIdentifier"] as? String == "com.example.art")
        #expect(next.json["contentVersion"] as? String == "1.1")
        #expect(next.json["output"] as? String == "./com.example.art-1.1.pkg")
    }

    /// Following the tool's own advice (`--plist SOURCE/ContentInfo.plist` for a plist without
    /// Contents/ beside it) packs the plist once, at the root (issue 21, item 7: it was also
    /// packed as Contents/ContentInfo.plist).
    @Test func aPlistInsideThePlainSourceIsPackedOnce() throws {
        let s = try Scratch()
        try s.write("plistonly/ContentInfo.plist", plist(id: "com.example.p", version: "1.0"))
        try s.write("plistonly/level.dat", "data")
        let refused = try CommandRunner.pkgtool(["create", s.path("plistonly"), "-o", s.path("p.pkg")])
        #expect(refused.stderr.contains("--plist \(s.path("plistonly"))/ContentInfo.plist"), "\(refused.stderr)")
        let result = try CommandRunner.pkgtool(["create", s.path("plistonly"), "--plist", s.path("plistonly/ContentInfo.plist"),
                                                "-o", s.path("p.pkg"), "--json"])
        #expect(result.status == 0, "\(result.stdout)")
        #expect(result.json["fileCount"] as? Int == 1)
        let files = try CommandRunner.pkgtool(["inspect", s.path("p.pkg"), "--files", "--json"]).json["files"] as? [[String: Any]] ?? []
        #expect(files.compactMap { $0["path"] as? String }.sorted() == ["ContentInfo.plist", "Contents", "Contents/level.dat"])
    }
}
