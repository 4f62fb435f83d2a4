import Foundation
import Testing
import TestSupport

/// Every text output gives a size of 1 MB or more in human units beside its byte count, and
/// `diff` says what an update costs a device (`downloadBytes`), counted as `sync --check` counts it.
@Suite(.offThePool) struct SizesPeopleReadTests {
    let scratch: Scratch
    let big: (pkg: String, contents: String)

    init() throws {
        scratch = try Scratch()
        big = try scratch.package("big", id: "com.example.sizes", version: "1.0", files: ["media.bin": pseudoRandomData(1_200_000, seed: 4)],
                                  extraArguments: ["--compression", "none"])
    }

    @Test func everyCommandSaysAMegabyteInHumanUnitsToo() async throws {
        let payload = "1200000 bytes (1.2 MB)"
        let created = try await CommandRunner.pkgtool(["create", big.contents, "-o", scratch.path("again.pkg"),
                                                        "--product-id", "com.example.sizes", "--content-version", "1.0", "--compression", "none"])
        #expect(created.stdout.contains("payload     \(payload)"), "\(created.stdout)")
        #expect(created.stdout.contains(" bytes (1.2 MB)\n  sha256"), "the package's size too: \(created.stdout)")
        let validated = try await CommandRunner.pkgtool(["validate", big.pkg])
        #expect(validated.stdout.contains("1 file, \(payload); 0 errors"), "\(validated.stdout)")
        let inspected = try await CommandRunner.pkgtool(["inspect", big.pkg])
        #expect(inspected.stdout.contains("payload      \(payload)"), "\(inspected.stdout)")
        let extracted = try await CommandRunner.pkgtool(["extract", big.pkg, "--documents", scratch.documents])
        #expect(extracted.stdout.contains("(1 file, \(payload))"), "\(extracted.stdout)")
        let published = try await CommandRunner.pkgtool(["publish", big.pkg, "--to", scratch.path("pub")])
        #expect(published.stdout.contains(" bytes (1.2 MB), sha256 "), "\(published.stdout)")
        // JSON keeps plain integers.
        #expect(try await CommandRunner.pkgtool(["inspect", big.pkg, "--json"]).json["payloadBytes"] as? Int == 1_200_000)
    }

    @Test func lessThanAMegabyteIsBytesAlone() async throws {
        let small = try scratch.package("small", id: "com.example.sizes", version: "1.0", text: ["a.txt": "hello"])
        let inspected = try await CommandRunner.pkgtool(["inspect", small])
        #expect(inspected.stdout.contains("payload      5 bytes\n"), "\(inspected.stdout)")
    }

    /// A device with 1.0 installed checks for 1.1: the figure `diff 1.0 1.1` gives is the one
    /// `sync --check` gives, and a delta's (the changed file and the header and TOC), not the package's.
    @Test func diffSaysWhatSyncCheckWouldDownload() async throws {
        var files: [String: Data] = ["media.bin": pseudoRandomData(1_200_000, seed: 4), "level.dat": pseudoRandomData(300_000, seed: 5)]
        let v10 = try scratch.package("v10", id: "com.example.update", version: "1.0", files: files)
        files["level.dat"] = pseudoRandomData(300_000, seed: 6)
        let v11 = try scratch.package("v11", id: "com.example.update", version: "1.1", files: files)
        try #require(try await CommandRunner.pkgtool(["extract", v10.pkg, "--documents", scratch.documents]).status == 0)
        try #require(try await CommandRunner.pkgtool(["publish", v11.pkg, "--to", scratch.path("pub")]).status == 0)
        let check = try await CommandRunner.pkgtool(["sync", scratch.path("pub"), "--documents", scratch.documents, "--check", "--json"])
        #expect(check.status == 3, "\(check.stdout)\(check.stderr)")
        let product = try #require((check.json["products"] as? [[String: Any]])?.first)
        #expect(product["delta"] as? Bool == true)
        let bytesToDownload = try #require(product["bytesToDownload"] as? Int)

        let diff = try await CommandRunner.pkgtool(["diff", v10.pkg, v11.pkg, "--json"])
        #expect(diff.status == 0, "\(diff.stderr)")
        #expect(diff.json["downloadBytes"] as? Int == bytesToDownload)
        #expect(bytesToDownload > 300_000 && bytesToDownload <= 300_000 + 64 * 1024, "the changed file, the header and TOC: \(bytesToDownload)")
        let text = try await CommandRunner.pkgtool(["diff", v10.pkg, v11.pkg])
        #expect(text.stdout.split(separator: "\n").last == "update from 1.0: \(bytesToDownload) bytes to download", "\(text.stdout)")
        #expect(text.stdout.contains("1 changed (300000 bytes now)"), "\(text.stdout)")

        // No update to download: the same version again, or a folder.
        let unbumped = try await CommandRunner.pkgtool(["diff", v11.pkg, v11.pkg, "--json"])
        #expect(unbumped.json.keys.contains("downloadBytes") && unbumped.json["downloadBytes"] is NSNull)
        let folder = try await CommandRunner.pkgtool(["diff", v10.pkg, v11.contents, "--json"])
        #expect(folder.json["downloadBytes"] is NSNull, "\(folder.stdout)")
    }

    @Test func aLargeUpdateSaysItsDownloadInHumanUnits() async throws {
        let v11 = try scratch.package("v11", id: "com.example.sizes", version: "1.1", files: ["media.bin": pseudoRandomData(1_200_000, seed: 5)],
                                      extraArguments: ["--compression", "none"])
        let text = try await CommandRunner.pkgtool(["diff", big.pkg, v11.pkg])
        let last = try #require(text.stdout.split(separator: "\n").last.map(String.init))
        #expect(last.hasPrefix("update from 1.0: ") && last.hasSuffix(" (1.2 MB) to download"), "\(text.stdout)")
        #expect(text.stdout.contains("1 changed (1200000 bytes (1.2 MB) now)"), "\(text.stdout)")
    }
}
