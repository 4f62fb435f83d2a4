import Crypto
import Foundation
import PkgKit
import Testing
import TestSupport

/// End-to-end tests of `pkgtool sync` against real servers: a folder published by `pkgtool
/// publish`, served by nginx (started by the test on loopback) or by the fault-injecting server.
/// After every fault: either a correct install, or the previous version intact and a clear
/// diagnostic; never a partial install, never a byte outside `Documents/<id>/`.
@Suite(.offThePool, .timeLimit(.minutes(2))) struct SyncCommandTests {
    static let id = "com.example.sync"
    let scratch: Scratch
    /// The content of 1.0 and of 1.1, which changes one file and adds one.
    let v10: (pkg: String, contents: String)
    let v11: (pkg: String, contents: String)
    let published: String

    init() throws {
        scratch = try Scratch()
        let big = randomData(400_000), text = Data(String(repeating: "a line of text that compresses well\n", count: 6000).utf8)
        var files: [String: Data] = ["media/big.bin": big, "text/long.txt": text, "changing.bin": randomData(100_000)]
        for index in 0..<20 { files["pages/p\(index).txt"] = Data("page \(index)\n".utf8) }
        v10 = try scratch.package("v10", id: Self.id, version: "1.0", files: files)
        files["changing.bin"] = randomData(100_000)
        files["new.txt"] = Data("new in 1.1\n".utf8)
        v11 = try scratch.package("v11", id: Self.id, version: "1.1", files: files)
        published = scratch.path("pub")
    }

    func publish(_ packages: String..., sign key: String? = nil) async throws {
        let result = try await CommandRunner.pkgtool(["publish"] + packages + ["--to", published] + (key.map { ["--sign", $0] } ?? []))
        try #require(result.status == 0, "publish failed: \(result.stdout)\(result.stderr)")
    }

    func sync(_ source: String, _ arguments: String..., documents: String? = nil) async throws -> CommandResult {
        try await CommandRunner.pkgtool(["sync", source, "--documents", documents ?? scratch.documents, "--json"] + arguments)
    }

    /// The product's one result in a sync report.
    func product(_ result: CommandResult) -> [String: Any] {
        (result.json["products"] as? [[String: Any]])?.first ?? [:]
    }

    var productFolder: String { scratch.documents + "/" + Self.id }

    /// Nothing but the product folder in Documents (and the catalog kept for the next run's
    /// conditional request); in it only versions, the record, the lock, and (when `download` is
    /// allowed) a download kept for resuming.
    func expectTidy(download: Bool = false, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(names(scratch.documents).filter { $0 != ".pkgtool-catalogs" } == [Self.id], sourceLocation: sourceLocation)
        for name in names(productFolder) where ContentVersion(name) == nil {
            let allowed = [".lock", "ContentInfo.plist"].contains(name) || (download && name.hasPrefix(".download-"))
            #expect(allowed, "unexpected \(name) in the product folder", sourceLocation: sourceLocation)
        }
    }

    // MARK: - nginx

    @Test func installThenDeltaUpdateOverNginx() async throws {
        try await publish(v10.pkg)
        let nginx = try NginxServer(root: published)
        defer { nginx.stop() }
        let catalogURL = nginx.url("catalog.json").absoluteString

        let first = try await sync(catalogURL, "--product", Self.id)
        #expect(first.status == 0, "\(first.stdout)\(first.stderr)")
        #expect(product(first)["status"] as? String == "installed")
        #expect(product(first)["delta"] as? Bool == false)
        #expect(differences(productFolder + "/1.0", expected: snapshot(v10.contents)).isEmpty)

        // Same catalog again: nothing downloaded beyond the catalog (and its signature, looked for).
        let requestsBefore = nginx.log(atLeast: 2).count
        let again = try await sync(catalogURL)
        #expect(again.status == 0)
        #expect(product(again)["status"] as? String == "unchanged")
        let afterAgain = nginx.log(atLeast: requestsBefore + 1)
        #expect(afterAgain.dropFirst(requestsBefore).allSatisfy { $0.path.hasSuffix("catalog.json") || $0.path.contains("/signatures/") }, "\(afterAgain)")

        // 1.1 published: an update run fetches the header, the TOC and the one changed file.
        try await publish(v11.pkg)
        let update = try await sync(catalogURL)
        #expect(update.status == 0, "\(update.stdout)\(update.stderr)")
        let result = product(update)
        #expect(result["status"] as? String == "installed")
        #expect(result["previousVersion"] as? String == "1.0")
        #expect(result["delta"] as? Bool == true)
        #expect(differences(productFolder + "/1.1", expected: snapshot(v11.contents)).isEmpty)
        #expect(readRecord(productFolder)?.version == "1.1")
        expectTidy()

        let size = Int(try FileManager.default.attributesOfItem(atPath: v11.pkg)[.size] as! Int)
        let requests = nginx.log(atLeast: afterAgain.count + 2).filter { $0.path.hasSuffix("/1.1.pkg") }
        let fetched = requests.reduce(0) { $0 + $1.bodyBytesSent }
        #expect(requests.allSatisfy { $0.status == 206 && $0.range != nil }, "\(requests)")
        // changing.bin (100,000 random bytes, stored) plus new.txt, the plist, header and TOC.
        #expect(fetched < 100_000 + 64 * 1024, "fetched \(fetched) of \(size) bytes: \(requests)")
        #expect(result["bytesDownloaded"] as? Int == fetched)
    }

    @Test func deltaEqualsAFullDownloadEvenAfterAnInstalledFileWasEdited() async throws {
        try await publish(v10.pkg)
        let nginx = try NginxServer(root: published)
        defer { nginx.stop() }
        let catalogURL = nginx.url("catalog.json").absoluteString
        #expect(try await sync(catalogURL, "--product", Self.id).status == 0)
        // Edited in place after install (same size, other bytes): it must not be reused.
        try scratch.write("Documents/\(Self.id)/1.0/pages/p3.txt", "PAGE 3\n")
        try await publish(v11.pkg)

        let delta = try await sync(catalogURL)
        #expect(product(delta)["delta"] as? Bool == true, "\(delta.stdout)")
        let full = try await sync(catalogURL, "--product", Self.id, "--no-delta", documents: scratch.path("Full"))
        #expect(product(full)["delta"] as? Bool == false)
        #expect(snapshot(productFolder + "/1.1") == snapshot(scratch.path("Full/\(Self.id)/1.1")))
        #expect(differences(productFolder + "/1.1", expected: snapshot(v11.contents)).isEmpty)
        #expect(FileManager.default.contents(atPath: productFolder + "/ContentInfo.plist")
                == FileManager.default.contents(atPath: scratch.path("Full/\(Self.id)/ContentInfo.plist")))
    }

    @Test func aServerThatIgnoresRangeGetsOneFullDownload() async throws {
        try await publish(v10.pkg)
        let nginx = try NginxServer(root: published, honorRanges: false)
        defer { nginx.stop() }
        let catalogURL = nginx.url("catalog.json").absoluteString
        #expect(try await sync(catalogURL, "--product", Self.id).status == 0)
        try await publish(v11.pkg)
        let update = try await sync(catalogURL)
        #expect(update.status == 0, "\(update.stdout)")
        #expect(product(update)["delta"] as? Bool == false)
        #expect(differences(productFolder + "/1.1", expected: snapshot(v11.contents)).isEmpty)
        let size = Int(try FileManager.default.attributesOfItem(atPath: v11.pkg)[.size] as! Int)
        let requests = nginx.log(atLeast: 4).filter { $0.path.hasSuffix("/1.1.pkg") }
        #expect(requests.filter { $0.bodyBytesSent == size }.count == 1, "\(requests)")
        #expect(requests.count <= 2, "one probe at most besides the download: \(requests)")

        // The same update in text: the line says why there was no delta.
        let other = scratch.path("OtherDocuments")
        #expect(try await CommandRunner.pkgtool(["extract", v10.pkg, "--documents", other]).status == 0)
        let text = try await CommandRunner.pkgtool(["sync", catalogURL, "--documents", other])
        #expect(text.status == 0 && text.stdout.contains("full download: server ignores Range"), "\(text.stdout)")
    }

    // MARK: - Signatures and the catalog

    @Test func trustedCatalogsOnly() async throws {
        let keys = scratch.path("keys")
        try FileManager.default.createDirectory(atPath: keys, withIntermediateDirectories: true)
        #expect(try await CommandRunner.pkgtool(["keygen", "--out", keys + "/good"]).status == 0)
        #expect(try await CommandRunner.pkgtool(["keygen", "--out", keys + "/other"]).status == 0)
        try await publish(v10.pkg, sign: keys + "/good.pem")
        let server = try FaultHTTPServer(root: published)
        defer { server.stop() }
        let catalogURL = server.url("catalog.json").absoluteString

        let wrongKey = try await sync(catalogURL, "--product", Self.id, "--trust", keys + "/other.pub.pem")
        #expect(wrongKey.status == 1)
        #expect(codes(product(wrongKey)).contains("bad-signature"))
        #expect(server.log.allSatisfy { !$0.path.hasSuffix(".pkg") }, "a package was fetched: \(server.log)")
        #expect(!exists(productFolder))

        try FileManager.default.removeItem(atPath: published + "/signatures")
        let unsigned = try await sync(catalogURL, "--product", Self.id, "--trust", keys + "/good.pub.pem")
        #expect(unsigned.status == 1)
        #expect(codes(product(unsigned)).contains("bad-signature"))
        #expect(!exists(productFolder))

        try await publish(v11.pkg, sign: keys + "/good.pem")
        let good = try await sync(catalogURL, "--product", Self.id, "--trust", keys + "/good.pub.pem")
        #expect(good.status == 0, "\(good.stdout)")
        #expect(readRecord(productFolder)?.version == "1.1")
    }

    /// `--trust` repeats (SPEC section 7): while a key is rotated, a client trusting the old and
    /// the new key takes a catalog signed by either, and one trusting neither takes none.
    @Test func trustRepeatsForKeyRotation() async throws {
        let keys = scratch.path("keys")
        try FileManager.default.createDirectory(atPath: keys, withIntermediateDirectories: true)
        for name in ["old", "new", "stranger"] {
            #expect(try await CommandRunner.pkgtool(["keygen", "--out", keys + "/" + name]).status == 0)
        }
        try await publish(v10.pkg, sign: keys + "/new.pem")
        let both = ["--trust", keys + "/old.pub.pem", "--trust", keys + "/new.pub.pem"]
        let stranger = try await CommandRunner.pkgtool(["sync", published, "--documents", scratch.documents, "--json", "--product", Self.id,
                                                        "--trust", keys + "/old.pub.pem", "--trust", keys + "/stranger.pub.pem"])
        #expect(stranger.status == 1 && codes(product(stranger)) == ["bad-signature"], "\(stranger.stdout)")
        let result = try await CommandRunner.pkgtool(["sync", published, "--documents", scratch.documents, "--json", "--product", Self.id] + both)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.json["signature"] as? String == "verified", "\(result.stdout)")
        #expect(readRecord(productFolder)?.version == "1.0")
    }

    @Test func anHTMLPageInsteadOfTheCatalogIsRefused() async throws {
        try await publish(v10.pkg)
        let server = try FaultHTTPServer(root: published)
        defer { server.stop() }
        server.always("catalog.json", .htmlInsteadOfFile)
        let result = try await sync(server.url("catalog.json").absoluteString, "--product", Self.id)
        #expect(result.status == 1)
        #expect(codes(product(result)) == ["invalid-catalog"])
        #expect(codes(result.json).isEmpty, "the failure is listed once, by the product: \(result.stdout)")
        #expect(!exists(productFolder))
    }

    /// A CDN's HTML error page is an invalid catalog with --trust too: its shape is checked before
    /// a signature is looked for, so nobody chases a signing problem that does not exist.
    @Test func anHTMLPageWithTrustIsAnInvalidCatalogNotAMissingSignature() async throws {
        let keys = scratch.path("keys")
        #expect(try await CommandRunner.pkgtool(["keygen", "--out", keys + "/good"]).status == 0)
        try await publish(v10.pkg, sign: keys + "/good.pem")
        let server = try FaultHTTPServer(root: published)
        defer { server.stop() }
        server.always("catalog.json", .htmlInsteadOfFile)
        let result = try await sync(server.url("catalog.json").absoluteString, "--product", Self.id, "--trust", keys + "/good.pub.pem")
        #expect(result.status == 1, "\(result.stdout)")
        #expect(codes(product(result)) == ["invalid-catalog"], "\(result.stdout)")
        #expect(!server.log.contains { $0.path.contains("/signatures/") }, "\(server.log)")
        #expect(!exists(productFolder))
    }

    /// --trust given anything but an Ed25519 public key stops before anything is downloaded,
    /// exit 2, saying what the file holds and what to give.
    @Test func aTrustFileWithoutAPublicKeyIsNamed() async throws {
        let keys = scratch.path("keys")
        #expect(try await CommandRunner.pkgtool(["keygen", "--out", keys + "/good"]).status == 0)
        let certificates = try TestCertificates(in: scratch.path("pki"))
        try await publish(v10.pkg, sign: keys + "/good.pem")
        let server = try FaultHTTPServer(root: published)
        defer { server.stop() }
        for (file, holds) in [(keys + "/good.pem", "holds a private key"), (certificates.authority, "holds a certificate")] {
            let result = try await sync(server.url("catalog.json").absoluteString, "--product", Self.id, "--trust", file)
            #expect(result.status == 2, "\(result.stdout)")
            let diagnostic = (product(result)["diagnostics"] as? [[String: Any]])?.first ?? [:]
            #expect(diagnostic["code"] as? String == "unreadable-input" && diagnostic["path"] as? String == file, "\(result.stdout)")
            let message = diagnostic["message"] as? String ?? ""
            #expect(message.contains(holds) && message.contains("NAME.pub.pem"), "\(message)")
            let text = try await CommandRunner.pkgtool(["sync", server.url("catalog.json").absoluteString, "--documents", scratch.documents,
                                                        "--product", Self.id, "--trust", file])
            #expect(text.status == 2 && text.stderr.contains(holds), "\(text.stderr)")
        }
        #expect(server.log.isEmpty, "nothing is downloaded: \(server.log)")
        #expect(!exists(productFolder))
    }

    /// An up-to-date sync over nginx configured as docs/publishing.md shows costs one request,
    /// answered 304, and no body: the catalog kept by the last sync is verified again and used.
    @Test func anUpToDateSyncIsOneNotModifiedRequest() async throws {
        let keys = scratch.path("keys")
        #expect(try await CommandRunner.pkgtool(["keygen", "--out", keys + "/good"]).status == 0)
        try await publish(v10.pkg, sign: keys + "/good.pem")
        let nginx = try NginxServer(root: published) { port in
            "server {\n listen 127.0.0.1:\(port);\n root \(self.published);\n etag on;\n gzip on;\n gzip_types application/json;\n location / { }\n}"
        }
        defer { nginx.stop() }
        let url = nginx.url("catalog.json").absoluteString
        let first = try await sync(url, "--product", Self.id, "--trust", keys + "/good.pub.pem")
        #expect(first.status == 0 && product(first)["status"] as? String == "installed", "\(first.stdout)\(first.stderr)")
        let count = nginx.log(atLeast: 3).count
        for arguments in [[], ["--check"]] {
            let again = try await CommandRunner.pkgtool(["sync", url, "--documents", scratch.documents, "--json", "--trust", keys + "/good.pub.pem"] + arguments)
            #expect(again.status == 0 && product(again)["status"] as? String == "unchanged", "\(again.stdout)\(again.stderr)")
            #expect(again.json["signature"] as? String == "verified")
            #expect((again.json["bytesDownloaded"] as? Int ?? -1) == 0, "\(again.stdout)")
        }
        let asked = nginx.log(atLeast: count + 2).dropFirst(count)
        #expect(asked.map(\.path) == ["/catalog.json", "/catalog.json"] && asked.allSatisfy { $0.status == 304 }, "\(asked)")
        expectTidy()
    }

    /// A catalog that nginx serves gzip-compressed and that inflates to 512 MiB is refused as
    /// soon as its decoded bytes pass the 64 MiB bound: memory stays bounded, nothing installed.
    @Test func aGzipBombIsAnInvalidCatalogInBoundedMemory() async throws {
        try await publish(v10.pkg)
        try Gzip.bomb(decodedBytes: 512 << 20).write(to: URL(fileURLWithPath: published + "/catalog.json.gz"))
        let nginx = try NginxServer(root: published) { port in
            "server {\n listen 127.0.0.1:\(port);\n root \(self.published);\n gzip_static on;\n location / { }\n}"
        }
        defer { nginx.stop() }
        let rss = scratch.path("rss")
        let result = try CommandRunner.run("/usr/bin/time", ["-f", "%M", "-o", rss, CommandRunner.pkgtool, "sync", nginx.url("catalog.json").absoluteString,
                                                             "--documents", scratch.documents, "--product", Self.id, "--json"])
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        let diagnostic = (product(result)["diagnostics"] as? [[String: Any]])?.first ?? [:]
        #expect(diagnostic["code"] as? String == "invalid-catalog", "\(result.stdout)")
        #expect((diagnostic["message"] as? String ?? "").contains("decodes to more than"), "\(result.stdout)")
        // Peak memory: the bound's 64 MiB and the program itself, far from the 512 MiB it decodes to.
        // time writes "Command exited with non-zero status 1" first, then the number.
        let peakKiB = (try String(contentsOfFile: rss, encoding: .utf8)).split(separator: "\n").last.flatMap { Int($0) } ?? .max
        #expect(peakKiB < 256 << 10, "peak RSS \(peakKiB) KiB")
        #expect(!exists(productFolder))
    }

    @Test func aPackageThatIsNotItsCatalogEntryIsRefused() async throws {
        try await publish(v10.pkg)
        // The server's file no longer has the catalog's sha256 (same size, one byte flipped).
        let served = published + "/\(Self.id)/1.0.pkg"
        var bytes = try Data(contentsOf: URL(fileURLWithPath: served))
        bytes[bytes.count - 100] ^= 0xFF
        try bytes.write(to: URL(fileURLWithPath: served))
        let server = try FaultHTTPServer(root: published)
        defer { server.stop() }
        let result = try await sync(server.url("catalog.json").absoluteString, "--product", Self.id)
        #expect(result.status == 1, "\(result.stdout)")
        #expect(codes(product(result)) == ["checksum-mismatch"])
        // Nothing at all: the product folder this run made is gone again.
        #expect(names(scratch.documents).isEmpty, "\(names(productFolder))")
    }

    @Test func unknownProductsOversizedEntriesAndDowngradesAreRefused() async throws {
        try await publish(v10.pkg)
        let unknown = try await sync(published, "--product", "com.example.nothere")
        #expect(unknown.status == 1)
        #expect(codes(product(unknown)) == ["unknown-product"])

        let oversized = try await sync(published, "--product", Self.id, "--max-size", "1000")
        #expect(oversized.status == 1)
        #expect(codes(product(oversized)) == ["size-limit"])
        #expect(!exists(productFolder))

        // Installed newer than the catalog: left alone, with a warning.
        let newer = try scratch.package("v20", id: Self.id, version: "2.0", files: ["a.txt": Data("two".utf8)])
        #expect(try await CommandRunner.pkgtool(["extract", newer.pkg, "--documents", scratch.documents]).status == 0)
        let result = try await sync(published)
        #expect(result.status == 0)
        #expect(product(result)["status"] as? String == "unchanged")
        #expect((product(result)["diagnostics"] as? [[String: Any]])?.first?["severity"] as? String == "warning")
        #expect(codes(product(result)) == ["installed-newer"])
        #expect(readRecord(productFolder)?.version == "2.0")

        // An update run over a product this catalog does not list leaves it be, with a warning.
        let other = try scratch.package("other", id: "com.example.elsewhere", version: "1.0", files: ["a.txt": Data("x".utf8)])
        #expect(try await CommandRunner.pkgtool(["extract", other.pkg, "--documents", scratch.documents]).status == 0)
        let update = try await sync(published)
        #expect(update.status == 0, "\(update.stdout)")
        let elsewhere = (update.json["products"] as? [[String: Any]])?.first { $0["productIdentifier"] as? String == "com.example.elsewhere" }
        #expect(elsewhere?["status"] as? String == "unchanged")
        // unknown-product is an error code: a product this catalog does not list is left as it
        // is without one, and said so (`listed: false`).
        #expect(codes(elsewhere ?? [:]) == [])
        #expect(elsewhere?["listed"] as? Bool == false)
    }

    // MARK: - Faults

    @Test func droppedConnectionsAnd503sAreRetriedAndResumed() async throws {
        try await publish(v10.pkg)
        let server = try FaultHTTPServer(root: published)
        defer { server.stop() }
        let path = "\(Self.id)/1.0.pkg"
        server.plan(path, [.status(503), .dropAfter(bytes: 150_000), .dropAfter(bytes: 100_000)])
        let result = try await sync(server.url("catalog.json").absoluteString, "--product", Self.id)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(differences(productFolder + "/1.0", expected: snapshot(v10.contents)).isEmpty)
        let requests = server.log(for: path)
        #expect(requests.count == 4, "\(requests)")
        // Each retry resumed from what the `.part` held (a transport may lose what it had
        // buffered when a connection drops, so the exact offsets are its own).
        #expect(requests.map { $0.range == nil } == [true, true, false, false], "\(requests)")
        expectTidy()
    }

    @Test func notFoundFailsWithThePreviousVersionIntact() async throws {
        try await publish(v10.pkg)
        let server = try FaultHTTPServer(root: published)
        defer { server.stop() }
        #expect(try await sync(server.url("catalog.json").absoluteString, "--product", Self.id).status == 0)
        try await publish(v11.pkg)
        server.always("\(Self.id)/1.1.pkg", .status(404))
        let result = try await sync(server.url("catalog.json").absoluteString)
        #expect(result.status == 2, "\(result.stdout)")
        #expect(product(result)["status"] as? String == "failed")
        #expect(readRecord(productFolder)?.version == "1.0")
        #expect(differences(productFolder + "/1.0", expected: snapshot(v10.contents)).isEmpty)
        expectTidy(download: true)
    }

    /// Issue 19's repro among them: the package, then 6 MB more with no length (the server ends
    /// the body by closing the connection), which once wedged sync for good.
    @Test(arguments: zip([50_000, 6_000_000], [FaultHTTPServer.LongBodyLength.includingExtra, .absent]))
    func aBodyLongerThanAnnouncedIsCutOffAndRefused(extra: Int, length: FaultHTTPServer.LongBodyLength) async throws {
        try await publish(v10.pkg)
        let server = try FaultHTTPServer(root: published)
        defer { server.stop() }
        server.always("\(Self.id)/1.0.pkg", .longBody(extra: extra, contentLength: length))
        let started = Date()
        let result = try await sync(server.url("catalog.json").absoluteString, "--product", Self.id)
        // Waiting for the default time-out alone would take 30 s.
        #expect(Date().timeIntervalSince(started) < 30, "refused at once, not after a timeout")
        #expect(result.status == 1, "\(result.stdout)")
        #expect(codes(product(result)) == ["checksum-mismatch"], "\(result.stdout)")
        #expect(!exists(productFolder + "/1.0"))
        let part = productFolder + "/.download-1.0.part"
        let size = Int64(try FileManager.default.attributesOfItem(atPath: v10.pkg)[.size] as! Int)
        #expect((scratch.size("Documents/\(Self.id)/.download-1.0.part") ?? 0) <= size, "\(part) grew past the package")
        #expect(names(scratch.documents).isEmpty, "a refused download leaves nothing: \(names(productFolder))")
    }

    /// `--timeout` bounds each wait for the server: a catalog that never comes fails once every
    /// attempt has waited that long (not the default 30 s each).
    @Test func aSilentServerFailsAfterTheTimeoutOnEveryAttempt() async throws {
        let server = try SilentServer()
        defer { server.stop() }
        let started = Date()
        // A second is long enough for each attempt's request to go out on a loaded machine.
        let result = try await sync(server.url("catalog.json").absoluteString, "--product", Self.id, "--timeout", "1")
        let elapsed = Date().timeIntervalSince(started)
        #expect(result.status == 2, "\(result.stdout)\(result.stderr)")
        #expect(result.stderr.contains("timed out") || result.stdout.contains("timed out"), "\(result.stdout)\(result.stderr)")
        // Counted once every request pkgtool sent before it ended has been read.
        #expect(try server.settledRequestCount() == 4, "four attempts, each timed out")
        // One attempt at the default time-out alone would take 30 s.
        #expect(elapsed >= 4 * 1 && elapsed < 30, "\(elapsed) s")
        #expect(!exists(productFolder))
    }

    /// `--keep` prunes an unchanged product too (SPEC section 7).
    @Test func keepPrunesAProductThatIsAlreadyCurrent() async throws {
        for package in [v10.pkg, v11.pkg] {
            #expect(try await CommandRunner.pkgtool(["extract", package, "--documents", scratch.documents]).status == 0)
        }
        try await publish(v11.pkg)
        #expect(try Installer(documents: scratch.documents).listVersions(productIdentifier: Self.id) == ["1.1", "1.0"])
        let result = try await sync(published, "--keep", "1")
        #expect(result.status == 0, "\(result.stdout)")
        #expect(product(result)["status"] as? String == "unchanged")
        #expect(product(result)["removedVersions"] as? [String] == ["1.0"], "\(result.stdout)")
        #expect(try Installer(documents: scratch.documents).listVersions(productIdentifier: Self.id) == ["1.1"])
        #expect(differences(productFolder + "/1.1", expected: snapshot(v11.contents)).isEmpty)
    }

    /// What `--keep` removed is said, as `extract --keep` says it: `; removed 1.0` on the
    /// product's line, and `removedVersions` in JSON, for a product installed or unchanged.
    @Test func keepSaysWhichVersionsItRemoved() async throws {
        for package in [v10.pkg, v11.pkg] {
            #expect(try await CommandRunner.pkgtool(["extract", package, "--documents", scratch.documents]).status == 0)
        }
        try await publish(v11.pkg)
        let unchanged = try await CommandRunner.pkgtool(["sync", published, "--documents", scratch.documents, "--keep", "1"])
        #expect(unchanged.status == 0, "\(unchanged.stdout)\(unchanged.stderr)")
        #expect(unchanged.stdout == "unchanged \(Self.id) 1.1; removed 1.0\n", "\(unchanged.stdout)")

        // Installed over 1.0 with --keep 1: 1.0 goes, and the line says so.
        let fresh = scratch.path("fresh")
        #expect(try await CommandRunner.pkgtool(["extract", v10.pkg, "--documents", fresh]).status == 0)
        let installed = try await CommandRunner.pkgtool(["sync", published, "--documents", fresh, "--keep", "1", "--no-delta"])
        #expect(installed.status == 0, "\(installed.stdout)\(installed.stderr)")
        #expect(installed.stdout.hasPrefix("installed \(Self.id) 1.1 (was 1.0, "), "\(installed.stdout)")
        #expect(installed.stdout.hasSuffix("; removed 1.0\n"), "\(installed.stdout)")
        #expect(try Installer(documents: fresh).listVersions(productIdentifier: Self.id) == ["1.1"])
        let json = try await sync(published, "--keep", "1", documents: fresh)
        #expect(product(json)["removedVersions"] as? [String] == [], "nothing left to remove: \(json.stdout)")
    }

    /// A product the catalog does not list is refused with the products it does list, the
    /// nearest spelling first, so that a typo shows its correction.
    @Test func anUnknownProductNamesTheCatalogsProducts() async throws {
        let near = try scratch.package("near", id: "com.example.syncs", version: "1.0", files: ["a.txt": Data("n".utf8)])
        let far = try scratch.package("far", id: "org.other.thing", version: "1.0", files: ["a.txt": Data("f".utf8)])
        try await publish(v10.pkg, near.pkg, far.pkg)
        let result = try await CommandRunner.pkgtool(["sync", published, "--documents", scratch.documents, "--product", "com.example.synk"])
        #expect(result.status == 1)
        #expect(result.stderr.contains(
            "error[unknown-product] \(published): the catalog lists no product com.example.synk; it lists com.example.sync, com.example.syncs, org.other.thing: check the identifier, or publish it first"),
            "\(result.stderr)")
        let json = try await sync(published, "--product", "com.example.synk")
        let message = (product(json)["diagnostics"] as? [[String: Any]])?.first?["message"] as? String
        #expect(message?.contains("it lists com.example.sync, com.example.syncs, org.other.thing") == true, "\(json.stdout)")
    }

    /// Starts `pkgtool sync` of the product in the background, its output kept in `log`.
    func startSync(_ server: FaultHTTPServer, log: String) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandRunner.pkgtool)
        process.arguments = ["sync", server.url("catalog.json").absoluteString, "--documents", scratch.documents, "--product", Self.id]
        try Data().write(to: URL(fileURLWithPath: log))
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// Waits until the download in progress holds `bytes` (or the process ends), then sends it
    /// `signal`. The watching runs on a thread of its own: Swift's cooperative threads may be
    /// busy with other tests for longer than the whole download takes.
    func signal(_ signal: Int32, _ process: Process, whenDownloadHolds bytes: Int64, in part: String) async {
        let scratch = scratch
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                let deadline = Date().addingTimeInterval(90)
                while (scratch.size(part) ?? 0) < bytes && process.isRunning && Date() < deadline { usleep(5_000) }
                if process.isRunning { kill(process.processIdentifier, signal) }
                done.resume()
            }
        }
    }

    /// SIGKILL in the middle of a slow download, then a second run: it continues from the
    /// `.part` with a Range request and installs the right bytes.
    @Test func killedMidDownloadResumesWithARangeRequest() async throws {
        try await publish(v10.pkg)
        let server = try FaultHTTPServer(root: published)
        defer { server.stop() }
        let path = "\(Self.id)/1.0.pkg"
        server.plan(path, [.slow(bytesPerSecond: 100_000)])
        let process = try startSync(server, log: scratch.path("first.log"))
        let part = "Documents/\(Self.id)/.download-1.0.part"
        await signal(SIGKILL, process, whenDownloadHolds: 150_000, in: part)
        await offThePool { process.waitUntilExit() }
        try #require(process.terminationReason == .uncaughtSignal, "the sync ended before it could be killed: \(scratch.text("first.log") ?? "")")
        let kept = try #require(scratch.size(part))
        #expect(kept >= 150_000)
        #expect(!exists(productFolder + "/1.0"))

        let result = try await sync(server.url("catalog.json").absoluteString, "--product", Self.id)
        #expect(result.status == 0, "\(result.stdout)")
        #expect(differences(productFolder + "/1.0", expected: snapshot(v10.contents)).isEmpty)
        // (The killed request is logged when the server notices, which may be after the next one.)
        let requests = server.log(for: path)
        let resumed = try #require(requests.first { $0.range != nil }, "\(requests)")
        #expect(resumed.range == "bytes=\(kept)-" && resumed.status == 206, "\(requests)")
        expectTidy()
    }

    /// Ctrl-C during a download: exit 130, the download kept for the next run, nothing installed.
    @Test func interruptedSyncKeepsTheDownloadAndThePreviousVersion() async throws {
        try await publish(v10.pkg)
        let server = try FaultHTTPServer(root: published)
        defer { server.stop() }
        server.plan("\(Self.id)/1.0.pkg", [.slow(bytesPerSecond: 100_000)])
        let process = try startSync(server, log: scratch.path("sync.log"))
        let part = "Documents/\(Self.id)/.download-1.0.part"
        await signal(SIGINT, process, whenDownloadHolds: 50_000, in: part)
        await offThePool { process.waitUntilExit() }
        #expect(process.terminationReason == .exit && process.terminationStatus == 130, "\(scratch.text("sync.log") ?? "")")
        #expect((scratch.size(part) ?? 0) >= 50_000)
        #expect(!exists(productFolder + "/1.0"))
        expectTidy(download: true)
    }
}
