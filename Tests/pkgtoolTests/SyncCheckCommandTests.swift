import Foundation
import Testing
import TestSupport

/// `pkgtool sync --check` and what sync's command line says (SPEC section 7): exit 0 when
/// nothing would change, 3 when updates are available; a folder URL with or without its slash; a
/// package given as SOURCE; the reasons a line gives for not using a delta.
@Suite(.offThePool, .timeLimit(.minutes(2))) struct SyncCheckCommandTests {
    static let id = "com.example.check"
    let scratch: Scratch
    let v10: (pkg: String, contents: String)
    let v11: (pkg: String, contents: String)

    init() throws {
        scratch = try Scratch()
        var files: [String: Data] = ["big.bin": pseudoRandomData(300_000, seed: 4), "note.txt": Data("note\n".utf8)]
        v10 = try scratch.package("v10", id: Self.id, version: "1.0", files: files)
        files["note.txt"] = Data("note, revised\n".utf8)
        v11 = try scratch.package("v11", id: Self.id, version: "1.1", files: files)
    }

    func pkgtool(_ arguments: String...) async throws -> CommandResult {
        try await CommandRunner.pkgtool(arguments)
    }

    func publish(_ package: String) async throws {
        let result = try await pkgtool("publish", package, "--to", scratch.path("pub"))
        try #require(result.status == 0, "\(result.stderr)")
    }

    @Test func checkExitsThreeWhenAnUpdateIsAvailableAndZeroWhenNot() async throws {
        try #require(await pkgtool("extract", v10.pkg, "--documents", scratch.documents).status == 0)
        try await publish(v10.pkg)
        try await publish(v11.pkg)
        let nginx = try NginxServer(root: scratch.path("pub"))
        defer { nginx.stop() }
        let before = snapshot(scratch.documents)
        // The published folder by its URL, without the trailing slash.
        let folderURL = nginx.url("").absoluteString.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        let check = try await pkgtool("sync", folderURL, "--documents", scratch.documents, "--check")
        #expect(check.status == 3, "\(check.stdout)\(check.stderr)")
        #expect(check.stdout.hasPrefix("update \(Self.id) 1.0 -> 1.1 (delta, "), "\(check.stdout)")
        #expect(differences(scratch.documents, expected: before).isEmpty, "a check writes nothing")

        let json = try await pkgtool("sync", folderURL + "/", "--documents", scratch.documents, "--check", "--json")
        #expect(json.status == 3)
        let product = try #require((json.json["products"] as? [[String: Any]])?.first)
        #expect(product["status"] as? String == "update")
        #expect(product["previousVersion"] as? String == "1.0" && product["contentVersion"] as? String == "1.1")
        #expect(product["delta"] as? Bool == true)
        let bytes = try #require(product["bytesToDownload"] as? Int)
        #expect(bytes > 0 && Int64(bytes) < (scratch.size("v11.pkg") ?? 0))

        #expect(try await pkgtool("sync", folderURL, "--documents", scratch.documents).status == 0)
        let after = try await pkgtool("sync", folderURL, "--documents", scratch.documents, "--check")
        #expect(after.status == 0, "\(after.stdout)\(after.stderr)")
        #expect(after.stdout == "unchanged \(Self.id) 1.1\n")
    }

    @Test func aPackageAsSourceIsAUsageErrorPointingToExtract() async throws {
        let result = try await pkgtool("sync", v10.pkg, "--documents", scratch.documents)
        #expect(result.status == 64)
        #expect(result.stderr.contains("pkgtool extract"), "\(result.stderr)")
        #expect(!exists(scratch.documents))
    }

    @Test func theLineSaysWhyNoDeltaWasUsed() async throws {
        try #require(await pkgtool("extract", v10.pkg, "--documents", scratch.documents).status == 0)
        try await publish(v11.pkg)
        let result = try await pkgtool("sync", scratch.path("pub"), "--documents", scratch.documents, "--no-delta")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("installed \(Self.id) 1.1 (was 1.0, ") && result.stdout.contains("full download: --no-delta"), "\(result.stdout)")
    }

    @Test func aSignedCatalogTakenWithoutTrustIsNoted() async throws {
        let key = scratch.path("release")
        try #require(await pkgtool("keygen", "--out", key).status == 0)
        try #require(await pkgtool("publish", v10.pkg, "--to", scratch.path("pub"), "--sign", key + ".pem").status == 0)
        let result = try await pkgtool("sync", scratch.path("pub"), "--documents", scratch.documents, "--product", Self.id)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("signature was not checked") && result.stderr.contains("--trust"), "\(result.stderr)")
        let trusted = try await pkgtool("sync", scratch.path("pub"), "--documents", scratch.documents, "--product", Self.id,
                                        "--trust", key + ".pub.pem")
        #expect(trusted.status == 0 && !trusted.stderr.contains("not checked"), "\(trusted.stderr)")
    }
}
