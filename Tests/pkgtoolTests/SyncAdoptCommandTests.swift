import Foundation
import PkgKit
import Testing
import TestSupport

/// `pkgtool sync --adopt FOLDER --adopt-version V`: content a device already has (SKDownload's
/// `ContentInfo.plist` beside `Contents/`) made installed version V, over nginx: only the file
/// that differs is downloaded, and the next update is a delta.
@Suite(.offThePool, .timeLimit(.minutes(2))) struct SyncAdoptCommandTests {
    static let id = "com.example.adopt"
    let scratch: Scratch
    let v10: (pkg: String, contents: String)
    let v11: (pkg: String, contents: String)
    let published: String
    let device: String

    init() throws {
        scratch = try Scratch()
        let versions = try VersionPair(in: scratch, id: Self.id)
        (v10, v11) = (versions.v10, versions.v11)
        published = scratch.path("pub")
        device = scratch.path("device")
        try FileManager.default.copyItem(atPath: scratch.path("src-v10"), toPath: device)
    }

    func publish(_ package: String) async throws {
        let result = try await CommandRunner.pkgtool(["publish", package, "--to", published])
        try #require(result.status == 0, "publish failed: \(result.stdout)\(result.stderr)")
    }

    @Test func aFolderOnTheDeviceIsAdoptedAndOnlyWhatDiffersIsDownloaded() async throws {
        try await publish(v10.pkg)
        // One page lost on the device, the rest as SKDownload left it.
        try FileManager.default.removeItem(atPath: device + "/Contents/pages/p3.txt")
        let nginx = try NginxServer(root: published)
        defer { nginx.stop() }
        let catalogURL = nginx.url("catalog.json").absoluteString
        let productFolder = scratch.documents + "/" + Self.id

        let adopted = try await CommandRunner.pkgtool(["sync", catalogURL, "--documents", scratch.documents, "--product", Self.id,
                                                       "--adopt", device, "--adopt-version", "1.0", "--json"])
        #expect(adopted.status == 0, "\(adopted.stdout)\(adopted.stderr)")
        let result = (adopted.json["products"] as? [[String: Any]])?.first ?? [:]
        #expect(result["status"] as? String == "installed")
        #expect(result["delta"] as? Bool == true && result["filesDownloaded"] as? Int == 1)
        #expect(differences(productFolder + "/1.0", expected: snapshot(v10.contents)).isEmpty)
        #expect(readRecord(productFolder)?.version == "1.0")
        #expect(exists(device + "/Contents/big.bin"), "the folder adopted is only read")
        let requests = nginx.log(atLeast: 2).filter { $0.path.hasSuffix("/1.0.pkg") }
        #expect(requests.allSatisfy { $0.status == 206 } && requests.reduce(0) { $0 + $1.bodyBytesSent } <= 64 * 1024 + 1024,
                "the header, the TOC and one page: \(requests)")

        // The next update is a delta from the adopted version.
        try await publish(v11.pkg)
        let update = try await CommandRunner.pkgtool(["sync", catalogURL, "--documents", scratch.documents])
        #expect(update.status == 0, "\(update.stdout)\(update.stderr)")
        #expect(update.stdout.contains("installed \(Self.id) 1.1 (was 1.0, delta: 1 file"), "\(update.stdout)")
        #expect(differences(productFolder + "/1.1", expected: snapshot(v11.contents)).isEmpty)
    }

    @Test func adoptingNeedsOneProductAndAVersion() async throws {
        try await publish(v10.pkg)
        for arguments in [["--adopt", device, "--adopt-version", "1.0"], ["--product", Self.id, "--adopt", device],
                          ["--product", Self.id, "--adopt", device, "--adopt-version", "1.0", "--check"]] {
            let result = try await CommandRunner.pkgtool(["sync", published, "--documents", scratch.documents] + arguments)
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
        }
        // A version the catalog does not list: refused, exit 1, nothing installed.
        let refused = try await CommandRunner.pkgtool(["sync", published, "--documents", scratch.documents, "--product", Self.id,
                                                       "--adopt", device, "--adopt-version", "0.9"])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("error[unknown-product]") && refused.stderr.contains("not its version 0.9"), "\(refused.stderr)")
        #expect(!exists(scratch.documents + "/" + Self.id))
    }
}
