import Foundation
import Testing
import TestSupport

/// Damage that only a full read finds (a checksum, a truncated stream) is caught by the pass that
/// writes the staging folder; nothing of it may remain, and the installed version stays current.
@Suite(.offThePool) struct ExtractIntegrityTests {
    /// A zip whose last file's stored bytes are flipped: names, sizes and the first bytes of
    /// every file look right, so only the full pass (the one that writes the staging folder)
    /// finds the CRC mismatch. (A xar is caught sooner: libarchive checks a skipped entry's
    /// checksum too.)
    private func corruptPackage(_ scratch: Scratch, version: String) throws -> String {
        try scratch.content("src-\(version)", id: "com.example.integrity", version: version,
                            files: ["a.txt": "first file\n", "z.bin": String(repeating: "payload ", count: 20_000)])
        let package = scratch.path("bad-\(version).pkg")
        #expect(try CommandRunner.pkgtool(["create", scratch.path("src-\(version)"), "--format", "zip", "--compression", "none", "-o", package]).status == 0)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: package))
        // The central directory and end record follow the last file's data; step back over them.
        let marker = Data("payload payload ".utf8)
        guard let last = bytes.range(of: marker, options: .backwards) else { throw CommandRunner.ShellError(command: "find data", stderr: "") }
        bytes[last.lowerBound] ^= 0x55
        try bytes.write(to: URL(fileURLWithPath: package))
        return package
    }

    @Test func corruptDataIntoEmptyDocumentsLeavesNothing() throws {
        let scratch = try Scratch()
        let package = try corruptPackage(scratch, version: "1.0")
        let documents = scratch.path("Documents")
        let result = try CommandRunner.pkgtool(["extract", package, "--documents", documents, "--json"])
        #expect(result.status == 1)
        #expect(result.json["status"] as? String == "refused")
        #expect(codes(result.json).contains("checksum-mismatch"))
        #expect(result.stderr.isEmpty || !result.stderr.contains("installed"))
        #expect((try? FileManager.default.contentsOfDirectory(atPath: documents)) ?? [] == [])
    }

    @Test func corruptUpdateKeepsTheInstalledVersion() throws {
        let scratch = try Scratch()
        let good = try scratch.content("good", id: "com.example.integrity", version: "1.0", files: ["a.txt": "version one\n"])
        #expect(try CommandRunner.pkgtool(["create", good, "-o", scratch.path("good.pkg")]).status == 0)
        let documents = scratch.path("Documents")
        #expect(try CommandRunner.pkgtool(["extract", scratch.path("good.pkg"), "--documents", documents]).status == 0)
        let product = documents + "/com.example.integrity"
        let record = try Data(contentsOf: URL(fileURLWithPath: product + "/ContentInfo.plist"))

        let result = try CommandRunner.pkgtool(["extract", try corruptPackage(scratch, version: "2.0"), "--documents", documents])
        #expect(result.status == 1)
        #expect(result.stderr.contains("error[checksum-mismatch] Contents/z.bin"))
        #expect(Set(names(product)) == [".lock", "ContentInfo.plist", "1.0"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: product + "/ContentInfo.plist")) == record)
        #expect(try String(contentsOfFile: product + "/1.0/a.txt", encoding: .utf8) == "version one\n")
    }
}
