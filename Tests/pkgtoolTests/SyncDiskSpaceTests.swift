import Foundation
import PkgKit
import Testing
import TestSupport

/// `pkgtool sync` and `extract` on a real file system too small for the package (a tmpfs):
/// `insufficient-space`, exit 2, both sizes named, nothing downloaded beyond the catalog and
/// nothing left behind; and a disk that another writer fills mid-download: `io-error`, whose
/// advice is to free space rather than to run sync again.
@Suite(.offThePool, .timeLimit(.minutes(2)), .enabled(if: Scratch.canMount, "mounting a tmpfs needs root"))
struct SyncDiskSpaceTests {
    static let id = "com.example.room"
    let scratch: Scratch
    let package: (pkg: String, contents: String)
    let published: String

    init() throws {
        scratch = try Scratch()
        package = try scratch.package("v11", id: Self.id, version: "1.1", files: ["media.bin": pseudoRandomData(1_500_000, seed: 7)])
        published = scratch.path("pub")
        let result = try CommandRunner.pkgtool(["publish", package.pkg, "--to", published])
        try #require(result.status == 0, "\(result.stderr)")
    }

    @Test func syncIntoADiskWithoutRoomDownloadsNothing() async throws {
        let disk = try scratch.mountTmpfs("small", size: "2m")
        defer { Scratch.unmount(disk) }
        let server = try FaultHTTPServer(root: published)
        defer { server.stop() }
        let documents = disk + "/Documents"
        let sync = ["sync", server.url("catalog.json").absoluteString, "--documents", documents, "--product", Self.id]

        let text = try await CommandRunner.pkgtool(sync)
        #expect(text.status == 2, "\(text.stdout)\(text.stderr)")
        #expect(text.stderr.contains("error[insufficient-space] \(documents)/\(Self.id): com.example.room 1.1 needs 3.0 MB (a 1.5 MB download, 1.5 MB unpacked), "),
                "\(text.stderr)")
        #expect(text.stderr.contains(" MB free: free space on the disk; nothing was downloaded"), "\(text.stderr)")
        #expect(text.stdout == "failed com.example.room 1.1: nothing installed\n", "no 'run sync again' before space is freed")

        let json = try await CommandRunner.pkgtool(sync + ["--json"])
        #expect(json.status == 2)
        let product = try #require((json.json["products"] as? [[String: Any]])?.first)
        #expect((product["diagnostics"] as? [[String: Any]])?.map { $0["code"] as? String } == ["insufficient-space"])
        let catalogBytes = try #require(scratch.size("pub/catalog.json"))
        #expect(json.json["bytesDownloaded"] as? Int64 == catalogBytes, "the catalog and nothing else")
        #expect(server.log(for: "\(Self.id)/1.1.pkg").isEmpty)
        #expect(!exists(documents + "/" + Self.id), "no product folder, no .part: \(names(documents))")
    }

    @Test func extractIntoADiskWithoutRoomWritesNothing() async throws {
        let disk = try scratch.mountTmpfs("small", size: "1m")
        defer { Scratch.unmount(disk) }
        let documents = disk + "/Documents"
        let result = try await CommandRunner.pkgtool(["extract", package.pkg, "--documents", documents, "--json"])
        #expect(result.status == 2, "\(result.stdout)\(result.stderr)")
        #expect(result.json["status"] as? String == "failed")
        let diagnostic = try #require((result.json["diagnostics"] as? [[String: Any]])?.first)
        #expect(diagnostic["code"] as? String == "insufficient-space")
        #expect((diagnostic["message"] as? String)?.contains("needs 1.5 MB (unpacked), 1.0 MB free: free space on the disk") == true, "\(diagnostic)")
        #expect(!exists(documents + "/" + Self.id), "\(names(documents))")
    }

    /// The room was there when sync asked; another program takes it while the package arrives.
    @Test func aDiskFilledByAnotherWriterMidDownloadSaysToFreeSpace() async throws {
        let disk = try scratch.mountTmpfs("filling", size: "8m")
        defer { Scratch.unmount(disk) }
        let server = try FaultHTTPServer(root: published)
        defer { server.stop() }
        // The first transfer stops after 200 kB and times out; the retry resumes onto a full disk.
        server.plan("\(Self.id)/1.1.pkg", [.stallAfter(bytes: 200_000)])
        let documents = disk + "/Documents"
        let background = try BackgroundCommand(["sync", server.url("catalog.json").absoluteString, "--documents", documents, "--product", Self.id,
                                          "--no-delta", "--timeout", "1"], in: scratch)
        let part = documents + "/\(Self.id)/.download-1.1.part"
        let started = await offThePool { waitUntil(seconds: 60) { (fileSize(part) ?? 0) >= 200_000 || !background.isRunning } }
        try #require(started, "the download never reached 200,000 bytes")
        try #require(FileManager.default.createFile(atPath: disk + "/filler", contents: nil))
        let filler = try #require(FileHandle(forWritingAtPath: disk + "/filler"))
        let block = Data(count: 64 << 10)
        while (try? filler.write(contentsOf: block)) != nil {}
        try? filler.close()
        #expect(freeBytes(disk) < 64 << 10, "the disk is full")

        let (result, _) = await offThePool { background.finish(within: 60) }
        #expect(result.status == 2, "\(result.stdout)\(result.stderr)")
        #expect(result.stderr.contains("error[io-error]") && result.stderr.contains("No space left on device: free space on the disk"),
                "\(result.stderr)")
        #expect(!result.stdout.contains("run sync again"), "\(result.stdout)")
        #expect(!exists(documents + "/\(Self.id)/1.1"))

        // Space freed, an app's update run at launch names no product: the first install is
        // found, counted from what its .part holds, and finished.
        let kept = try #require(fileSize(part), "the download is kept")
        try FileManager.default.removeItem(atPath: disk + "/filler")
        let updateRun = ["sync", server.url("catalog.json").absoluteString, "--documents", documents]
        let check = try await CommandRunner.pkgtool(updateRun + ["--check"])
        #expect(check.status == 3, "\(check.stdout)\(check.stderr)")
        let size = try #require(scratch.size("pub/\(Self.id)/1.1.pkg"))
        #expect(check.stdout.contains("update \(Self.id) 1.1 (full, \(ByteSize.human(size - kept)) to download, \(ByteSize.human(kept)) already downloaded)"),
                "\(check.stdout)")
        let sync = try await CommandRunner.pkgtool(updateRun)
        #expect(sync.status == 0, "\(sync.stdout)\(sync.stderr)")
        #expect(sync.stdout.contains("installed \(Self.id) 1.1 (") && sync.stdout.contains("resumed at \(ByteSize.human(kept))"), "\(sync.stdout)")
        #expect(differences(documents + "/\(Self.id)/1.1", expected: snapshot(package.contents)).isEmpty)
    }

    private func fileSize(_ path: String) -> Int64? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value
    }
}
