import Crypto
import Foundation
import PkgKit
import Testing
import TestSupport

/// End-to-end tests of `pkgtool publish` and `pkgtool keygen`, run against the built binary.
@Suite(.offThePool, .timeLimit(.minutes(2))) struct PublishCommandTests {
    let scratch: Scratch

    init() throws {
        scratch = try Scratch()
    }

    /// Builds `<name>.pkg` with `pkgtool create` from a folder of the given files.
    @discardableResult
    func package(_ name: String, id: String = "com.example.book", version: String,
                 files: [String: String] = ["a.txt": "hello\n"], zip: Bool = false) throws -> String {
        try scratch.package(name, id: id, version: version, text: files, extraArguments: zip ? ["--format", "zip"] : [])
    }

    func publish(_ arguments: [String]) throws -> CommandResult {
        try CommandRunner.pkgtool(["publish"] + arguments + ["--json"])
    }

    @Test func publishingTwiceGivesIdenticalCatalogBytes() throws {
        let a = try package("a", id: "com.example.a", version: "1.0")
        let b = try package("b", id: "com.example.b", version: "2.1", zip: true)
        let dir = scratch.path("pub")
        let first = try publish([a, b, "--to", dir])
        #expect(first.status == 0, "\(first.stdout)\(first.stderr)")
        #expect(first.json["status"] as? String == "published")
        let catalog = try #require(FileManager.default.contents(atPath: dir + "/catalog.json"))
        let parsed = try Catalog(data: catalog)
        #expect(parsed.encoded() == catalog)
        #expect(parsed.products.map(\.productIdentifier) == ["com.example.a", "com.example.b"])
        let entryA = try #require(parsed.product("com.example.a")?.latestVersion)
        let bytesA = try #require(FileManager.default.contents(atPath: a))
        #expect(entryA.url == "com.example.a/1.0.pkg")
        #expect(entryA.sha256 == SHA256.hash(data: bytesA).hexString)
        #expect(entryA.size == Int64(bytesA.count))
        #expect(entryA.tocSHA256 != nil)
        #expect(parsed.product("com.example.b")?.latestVersion?.tocSHA256 == nil, "a zip has no TOC to anchor")
        #expect(FileManager.default.contents(atPath: dir + "/com.example.a/1.0.pkg") == bytesA)

        let before = snapshot(dir)
        let second = try publish([b, a, "--to", dir])
        #expect(second.status == 0)
        #expect(second.json["status"] as? String == "unchanged")
        let statuses = (second.json["packages"] as? [[String: Any]])?.compactMap { $0["status"] as? String }
        #expect(statuses == ["unchanged", "unchanged"])
        #expect(snapshot(dir) == before)

        // Another folder, another order, another working directory: the same bytes.
        let elsewhere = try CommandRunner.pkgtool(["publish", b, a, "--to", "other"], in: scratch.url)
        #expect(elsewhere.status == 0)
        #expect(FileManager.default.contents(atPath: scratch.path("other/catalog.json")) == catalog)
    }

    @Test func immutabilityRefusalsLeaveTheFolderByteIdentical() throws {
        let v10 = try package("v10", version: "1.0")
        let v11 = try package("v11", version: "1.1", files: ["a.txt": "newer\n"])
        let dir = scratch.path("pub")
        #expect(try publish([v10, v11, "--to", dir]).status == 0)
        let before = snapshot(dir)

        let changed10 = try package("changed10", version: "1.0", files: ["a.txt": "other bytes\n"])
        let sameSpelledOtherwise = try package("v100", version: "1.0.0", files: ["a.txt": "other bytes\n"])
        let lower = try package("v105", version: "1.0.5")
        for (refused, extra) in [(changed10, v11), (sameSpelledOtherwise, v11), (lower, v11)] {
            let result = try publish([extra, refused, "--to", dir])
            #expect(result.status == 1, "\(result.stdout)")
            #expect(result.json["status"] as? String == "refused")
            let packages = result.json["packages"] as? [[String: Any]] ?? []
            #expect(packages.map { $0["status"] as? String } == ["skipped", "refused"])
            #expect(codes(packages.last ?? [:]).contains("version-not-bumped"))
            #expect(snapshot(dir) == before)
        }
        // The same version twice in one run with different bytes.
        let v12a = try package("v12a", version: "1.2", files: ["a.txt": "x\n"])
        let v12b = try package("v12b", version: "1.2", files: ["a.txt": "y\n"])
        #expect(try publish([v12a, v12b, "--to", dir]).status == 1)
        #expect(snapshot(dir) == before)
    }

    /// A package made by another writer without file checksums is published, with a warning
    /// that devices will download it whole.
    @Test func aPackageWithoutChecksumsIsPublishedWithAWarning() throws {
        var unchecked = XarCrafter.File(path: "Contents/big.bin", data: Array(repeating: 7, count: 4096))
        unchecked.omitChecksums = true
        let path = try XarCrafter([XarCrafter.contentInfo(version: "1.0", id: "com.example.a"), .file("Contents/a.txt", "hello\n"), unchecked])
            .write(to: scratch.path("a.pkg"))
        let result = try CommandRunner.pkgtool(["publish", path, "--to", scratch.path("pub")])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let output = result.stdout + result.stderr
        #expect(output.contains("warning[missing-checksum] \(path) Contents/big.bin: has no checksum in the table of contents: devices will download this version whole"),
                "\(output)")
        #expect(FileManager.default.fileExists(atPath: scratch.path("pub/com.example.a/1.0.pkg")))
    }

    @Test func anInvalidPackageChangesNothing() throws {
        let good = try package("good", version: "1.0")
        let dir = scratch.path("pub")
        // Into a folder that does not exist yet: it is not even created.
        let notMade = try publish([good, scratch.path("src-good"), "--to", dir])
        #expect(notMade.status == 1)
        #expect(!exists(dir))

        #expect(try publish([good, "--to", dir]).status == 0)
        let before = snapshot(dir)
        let second = try package("second", id: "com.example.second", version: "1.0")
        let badName = scratch.path("bad.zip")
        try FileManager.default.copyItem(atPath: second, toPath: badName)
        try scratch.write("script-src/ContentInfo.plist", plist(id: "com.example.script", version: "1.0"))
        try scratch.write("script-src/Contents/run.sh", "#!/bin/sh\necho hi\n")
        for invalid in [badName, scratch.path("script-src"), scratch.path("missing.pkg")] {
            let result = try publish([second, invalid, "--to", dir])
            #expect(result.status == (invalid.hasSuffix("missing.pkg") ? 2 : 1), "\(invalid): \(result.stdout)")
            #expect(snapshot(dir) == before)
        }
        let missing = try publish([scratch.path("missing.pkg"), "--to", dir])
        #expect(codes((missing.json["packages"] as? [[String: Any]])?.first ?? [:]) == ["unreadable-input"])
    }

    /// A folder whose catalog.json is not a catalog forbids the change: refused (exit 1, status
    /// `refused`, `invalid-catalog`) as the JSON and the exit status both say, and nothing changes.
    @Test func aFolderWhoseCatalogIsInvalidIsRefused() throws {
        let good = try package("good", version: "1.0")
        let dir = scratch.path("pub")
        try scratch.write("pub/catalog.json", "{\"not\": \"a catalog\"}\n")
        let before = snapshot(dir)
        let result = try publish([good, "--to", dir])
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        #expect(result.json["status"] as? String == "refused")
        #expect(codes(result.json) == ["invalid-catalog"])
        #expect(snapshot(dir) == before)
    }

    /// A full disk while copying a package: exit 2, `io-error` naming the file, and the folder
    /// as it was (the catalog still names only what is in place, no partial package).
    @Test(.enabled(if: Scratch.canMount, "mounting a tmpfs needs root"))
    func aFullDiskLeavesThePublishedFolderAsItWas() throws {
        let small = try package("small", version: "1.0")
        let big = try scratch.package("big", version: "2.0", files: ["big.bin": randomData(3 << 20)],
                                      extraArguments: ["--compression", "none"]).pkg
        let dir = try scratch.mountTmpfs("pub", size: "2m")
        #expect(try publish([small, "--to", dir]).status == 0)
        let before = snapshot(dir)
        let result = try publish([big, "--to", dir])
        #expect(result.status == 2, "\(result.stdout)\(result.stderr)")
        #expect(result.json["status"] as? String == "failed")
        let diagnostics = result.json["diagnostics"] as? [[String: Any]] ?? []
        #expect(diagnostics.map { $0["code"] as? String } == ["io-error"])
        #expect((diagnostics.first?["path"] as? String)?.hasPrefix(dir + "/com.example.book/") == true)
        #expect(snapshot(dir) == before)
    }

    @Test func keepPrunesOldVersionsAfterTheCatalog() throws {
        let dir = scratch.path("pub")
        let v1 = try package("v1", version: "1.0", files: ["a.txt": "1\n"])
        let v2 = try package("v2", version: "1.1", files: ["a.txt": "2\n"])
        let v3 = try package("v3", version: "1.10", files: ["a.txt": "3\n"])
        let other = try package("o", id: "com.example.other", version: "3.0")
        #expect(try publish([v1, v2, other, "--to", dir]).status == 0)
        let result = try publish([v3, "--to", dir, "--keep", "2"])
        #expect(result.status == 0)
        let removed = result.json["removed"] as? [[String: Any]] ?? []
        #expect(removed.map { $0["contentVersion"] as? String } == ["1.0"])
        #expect(removed.first?["path"] as? String == dir + "/com.example.book/1.0.pkg")
        let catalog = try Catalog(data: #require(FileManager.default.contents(atPath: dir + "/catalog.json")))
        #expect(catalog.product("com.example.book")?.versions.map(\.contentVersion.description) == ["1.10", "1.1"])
        #expect(catalog.product("com.example.book")?.latest.description == "1.10")
        #expect(catalog.product("com.example.other")?.versions.count == 1)
        #expect(!FileManager.default.fileExists(atPath: dir + "/com.example.book/1.0.pkg"))
        #expect(FileManager.default.fileExists(atPath: dir + "/com.example.book/1.1.pkg"))
        #expect(FileManager.default.fileExists(atPath: dir + "/com.example.other/3.0.pkg"))
        // --keep 0 is wrong usage.
        #expect(try CommandRunner.pkgtool(["publish", v3, "--to", dir, "--keep", "0"]).status == 64)
    }

    @Test func signedCatalogsVerifyWithOpenSSLAndStaySigned() throws {
        let key = scratch.path("release")
        let made = try CommandRunner.pkgtool(["keygen", "--out", key, "--json"])
        #expect(made.status == 0, "\(made.stderr)")
        #expect(made.json["status"] as? String == "created")
        let mode = try FileManager.default.attributesOfItem(atPath: key + ".pem")[.posixPermissions] as? NSNumber
        #expect(mode?.intValue == 0o600)
        let pub = try String(contentsOfFile: key + ".pub.pem", encoding: .utf8)
        #expect(made.json["publicKeyPEM"] as? String == pub)

        let dir = scratch.path("pub")
        let v10 = try package("v10", version: "1.0")
        let signed = try publish([v10, "--to", dir, "--sign", key + ".pem"])
        #expect(signed.status == 0, "\(signed.stdout)")
        let signaturePath = dir + "/signatures/" + sha256Hex(try scratch.read("pub/catalog.json")) + ".sig"
        #expect(signed.json["signature"] as? String == signaturePath)
        #expect(!exists(dir + "/catalog.json.sig"))
        let sig = try #require(FileManager.default.contents(atPath: signaturePath))
        #expect(sig.last == 0x0A && sig.filter { $0 == 0x0A }.count == 1)
        #expect(try opensslVerifies(line: sig.dropLast(), key: key + ".pub.pem", catalog: dir + "/catalog.json"))

        // A signed folder is not changed without the key, nor with another key.
        let before = snapshot(dir)
        let v11 = try package("v11", version: "1.1", files: ["a.txt": "newer\n"])
        let unsigned = try publish([v11, "--to", dir])
        #expect(unsigned.status == 1)
        #expect(codes(unsigned.json).contains("bad-signature"))
        #expect(try CommandRunner.pkgtool(["keygen", "--out", scratch.path("other")]).status == 0)
        #expect(try publish([v11, "--to", dir, "--sign", scratch.path("other.pem")]).status == 1)
        #expect(snapshot(dir) == before)
        // Republishing what is there needs no key; with the key, the new catalog is signed.
        #expect(try publish([v10, "--to", dir]).status == 0)
        #expect(try publish([v11, "--to", dir, "--sign", key + ".pem"]).status == 0)
        let catalog = try #require(FileManager.default.contents(atPath: dir + "/catalog.json"))
        try CatalogVerifyingKey(pem: pub).verify(catalog: catalog, signatureFile: scratch.contents("pub/" + CatalogSignature.relativePath(for: catalog)))
        // A key file that is not a key: exit 2, nothing written.
        try scratch.write("garbage.pem", "not a key\n")
        let garbage = try publish([v11, "--to", scratch.path("pub3"), "--sign", scratch.path("garbage.pem")])
        #expect(garbage.status == 2)
        #expect(codes(garbage.json) == ["unreadable-input"])
        #expect(!exists(scratch.path("pub3")))
    }

    /// `--sign` twice: one line per key, in the order given, each verifying with openssl.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl")))
    func repeatedSignWritesOneLinePerKey() throws {
        for name in ["old", "new"] { #expect(try CommandRunner.pkgtool(["keygen", "--out", scratch.path(name)]).status == 0) }
        let dir = scratch.path("pub")
        #expect(try publish([package("v10", version: "1.0"), "--to", dir, "--sign", scratch.path("old.pem")]).status == 0)
        let rotated = try CommandRunner.pkgtool(["publish", try package("v11", version: "1.1", files: ["a.txt": "newer\n"]), "--to", dir,
                                                 "--sign", scratch.path("old.pem"), "--sign", scratch.path("new.pem")])
        #expect(rotated.status == 0, "\(rotated.stderr)")
        let catalog = try scratch.read("pub/catalog.json")
        #expect(rotated.stdout.contains("wrote \(dir)/catalog.json and \(dir)/signatures/\(sha256Hex(catalog)).sig"), "\(rotated.stdout)")
        let file = try scratch.read("pub/" + CatalogSignature.relativePath(for: catalog))
        let lines = file.split(separator: 0x0A)
        #expect(lines.count == 2 && file.last == 0x0A)
        #expect(try opensslVerifies(line: Data(lines[0]), key: scratch.path("old.pub.pem"), catalog: dir + "/catalog.json"))
        #expect(try opensslVerifies(line: Data(lines[1]), key: scratch.path("new.pub.pem"), catalog: dir + "/catalog.json"))
        #expect(try !opensslVerifies(line: Data(lines[0]), key: scratch.path("new.pub.pem"), catalog: dir + "/catalog.json"))
        #expect(names(dir + "/signatures").count == 3, "two signature files and the order record")
    }

    /// A line of a signature file checked by `openssl pkeyutl -verify -rawin`.
    func opensslVerifies(line: Data, key: String, catalog: String) throws -> Bool {
        let raw = try #require(Data(base64Encoded: String(decoding: line, as: UTF8.self)))
        let sigPath = try scratch.write("sig-\(UUID().uuidString).bin", raw)
        let verified = try CommandRunner.run("/usr/bin/openssl", ["pkeyutl", "-verify", "-pubin", "-inkey", key, "-rawin",
                                                                  "-in", catalog, "-sigfile", sigPath])
        return verified.status == 0
    }

    /// SPEC section 3: a destination that cannot be written is `io-error`, exit 2, its line naming
    /// the file once; missing parent folders are created.
    @Test func unwritableDestinationsAreIOErrorsAndParentsAreCreated() throws {
        let v10 = try package("v10", version: "1.0")
        try scratch.write("plain.txt", "a file\n")
        let underFile = try publish([v10, "--to", scratch.path("plain.txt/pub")])
        #expect(underFile.status == 2, "\(underFile.stdout)")
        #expect(underFile.json["status"] as? String == "failed")
        let diagnostics = underFile.json["diagnostics"] as? [[String: Any]] ?? []
        #expect(diagnostics.map { $0["code"] as? String } == ["io-error"])
        #expect(diagnostics.first?["path"] as? String == scratch.path("plain.txt"))
        let text = try CommandRunner.pkgtool(["publish", v10, "--to", scratch.path("plain.txt/pub")])
        #expect(text.status == 2)
        #expect(text.stderr.contains("error[io-error] \(scratch.path("plain.txt")): is a file, not a folder"), "\(text.stderr)")
        #expect(text.stderr.components(separatedBy: "plain.txt").count == 2, "the path once: \(text.stderr)")

        let deep = scratch.path("a/b/c")
        #expect(try publish([v10, "--to", deep]).status == 0)
        #expect(exists(deep + "/catalog.json") && exists(deep + "/com.example.book/1.0.pkg"))

        let keyUnderFile = try CommandRunner.pkgtool(["keygen", "--out", scratch.path("plain.txt/key"), "--json"])
        #expect(keyUnderFile.status == 2)
        #expect(keyUnderFile.json["status"] as? String == "failed")
        #expect(codes(keyUnderFile.json) == ["io-error"])
        let keyText = try CommandRunner.pkgtool(["keygen", "--out", scratch.path("plain.txt/key")])
        #expect(keyText.stderr.hasPrefix("error[io-error] \(scratch.path("plain.txt")): "), "\(keyText.stderr)")
        #expect(keyText.stderr.components(separatedBy: "plain.txt").count == 2, "the path once: \(keyText.stderr)")
        #expect(try CommandRunner.pkgtool(["keygen", "--out", scratch.path("keys/dir/name")]).status == 0)
        #expect(exists(scratch.path("keys/dir/name.pem")) && exists(scratch.path("keys/dir/name.pub.pem")))
    }

    /// A read-only file system: publish and keygen say `io-error` (exit 2), not `unreadable-input`.
    @Test(.enabled(if: Scratch.canMount, "mounting a read-only tmpfs needs root"))
    func aReadOnlyFileSystemIsAnIOError() throws {
        let v10 = try package("v10", version: "1.0")
        let ro = try scratch.mountTmpfs("ro", size: "1m")
        try CommandRunner.shell("mount -o remount,ro '\(ro)'")
        let published = try publish([v10, "--to", ro + "/pub"])
        #expect(published.status == 2)
        #expect(codes(published.json) == ["io-error"])
        let key = try CommandRunner.pkgtool(["keygen", "--out", ro + "/key"])
        #expect(key.status == 2)
        #expect(key.stderr.hasPrefix("error[io-error] \(ro)/key.pem: "), "\(key.stderr)")
        #expect(key.stderr.components(separatedBy: "key.pem").count == 2, "the path once: \(key.stderr)")
        #expect(!key.stderr.contains("unreadable-input"))
    }

    /// Several packages in play: each diagnostic line names its package file, then the entry.
    @Test func diagnosticLinesNameTheirPackage() throws {
        let good = try package("good", version: "1.0")
        try scratch.write("script-src/ContentInfo.plist", plist(id: "com.example.script", version: "1.0"))
        try scratch.write("script-src/Contents/run.sh", "#!/bin/sh\necho hi\n")
        try scratch.write("script-src/Contents/a.txt", "text\n")
        let folderGiven = scratch.path("script-src")
        let result = try CommandRunner.pkgtool(["publish", good, folderGiven, scratch.path("missing.pkg"), "--to", scratch.path("pub")])
        #expect(result.status == 2)
        let lines = result.stderr.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("error[executable-code] \(folderGiven) Contents/run.sh: ") }, "\(result.stderr)")
        #expect(lines.contains { $0.hasPrefix("error[unreadable-archive] \(folderGiven): a folder, not a package file") }, "\(result.stderr)")
        #expect(lines.contains { $0.hasPrefix("error[unreadable-input] \(scratch.path("missing.pkg")): ") }, "\(result.stderr)")
        for line in lines where line.hasPrefix("error[") {
            #expect(line.components(separatedBy: scratch.root).count == 2, "one file per line: \(line)")
        }
    }

    @Test func keygenNeverOverwritesAKey() throws {
        let name = scratch.path("k")
        #expect(try CommandRunner.pkgtool(["keygen", "--out", name]).status == 0)
        let privateKey = try #require(FileManager.default.contents(atPath: name + ".pem"))
        let again = try CommandRunner.pkgtool(["keygen", "--out", name, "--json"])
        #expect(again.status == 0)
        #expect(again.json["status"] as? String == "existing")
        #expect(FileManager.default.contents(atPath: name + ".pem") == privateKey)
        // A lost public key is derived again from the private one.
        let pub = try #require(FileManager.default.contents(atPath: name + ".pub.pem"))
        try FileManager.default.removeItem(atPath: name + ".pub.pem")
        #expect(try CommandRunner.pkgtool(["keygen", "--out", name]).status == 0)
        #expect(FileManager.default.contents(atPath: name + ".pub.pem") == pub)
        // A public key that belongs to another private key is refused.
        #expect(try CommandRunner.pkgtool(["keygen", "--out", scratch.path("j")]).status == 0)
        try FileManager.default.removeItem(atPath: name + ".pub.pem")
        try FileManager.default.copyItem(atPath: scratch.path("j.pub.pem"), toPath: name + ".pub.pem")
        let mismatch = try CommandRunner.pkgtool(["keygen", "--out", name, "--json"])
        #expect(mismatch.status == 1)
        #expect(codes(mismatch.json) == ["bad-signature"])
        #expect(FileManager.default.contents(atPath: name + ".pem") == privateKey)
    }

    @Test(.enabled(if: NginxServer.isAvailable, "nginx is not installed: run `make deps`"))
    func nginxServesThePublishedFolder() async throws {
        let dir = scratch.path("pub")
        let v10 = try package("v10", version: "1.0")
        let other = try package("other", id: "com.example.other", version: "2.0", zip: true)
        #expect(try publish([v10, other, "--to", dir]).status == 0)
        let nginx = try NginxServer(root: dir)
        defer { nginx.stop() }
        let transport = StandardTransport()
        let catalogURL = nginx.url("catalog.json")
        let bytes = try await transport.fetchData(catalogURL, maximumBytes: Int64(Catalog.maximumBytes))
        #expect(bytes == FileManager.default.contents(atPath: dir + "/catalog.json"))
        let catalog = try Catalog(data: bytes)
        var paths: [String] = ["/catalog.json"]
        for product in catalog.products {
            for version in product.versions {
                let url = try #require(version.resolvedURL(relativeTo: catalogURL))
                let body = try await transport.fetchData(url, maximumBytes: version.size)
                #expect(Int64(body.count) == version.size)
                #expect(SHA256.hash(data: body).hexString == version.sha256)
                paths.append(url.path)
            }
        }
        let log = nginx.log(atLeast: paths.count)
        #expect(log.map(\.path) == paths)
        #expect(log.allSatisfy { $0.status == 200 && $0.range == nil })
        #expect(log.dropFirst().map(\.bodyBytesSent) == catalog.products.flatMap { $0.versions.map { Int($0.size) } })
    }
}
