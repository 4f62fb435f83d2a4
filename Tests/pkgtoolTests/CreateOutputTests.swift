import Foundation
import Testing
import TestSupport

/// Where `create` writes (issue 12, items 6 and 12): `./<id>-<version>.pkg` by default, never
/// over the `--previous` package, into `-o DIR`, and never into its own next package.
@Suite(.offThePool) struct CreateOutputTests {
    @Test func successiveVersionsDoNotOverwriteEachOther() async throws {
        let scratch = try Scratch()
        let source = try scratch.content("src", id: "com.acme.vol1", version: "1.0", files: ["a.txt": "one"])
        #expect(try await CommandRunner.pkgtool(["create", source, "--quiet"], in: scratch.url).status == 0)
        try scratch.write("src/Contents/a.txt", "two")
        let next = try await CommandRunner.pkgtool(["create", source, "--previous", "com.acme.vol1-1.0.pkg", "--bump", "minor", "--json"], in: scratch.url)
        #expect(next.status == 0, "\(next.stderr)")
        #expect(next.json["output"] as? String == "./com.acme.vol1-1.1.pkg")
        #expect(scratch.list(".").filter { $0.hasSuffix(".pkg") } == ["com.acme.vol1-1.0.pkg", "com.acme.vol1-1.1.pkg"])
    }

    @Test func writingOverThePreviousPackageIsRefused() async throws {
        let scratch = try Scratch()
        let source = try scratch.content("src", id: "com.acme.vol1", version: "1.0", files: ["a.txt": "one"])
        #expect(try await CommandRunner.pkgtool(["create", source, "-o", scratch.path("vol1.pkg")]).status == 0)
        let before = try scratch.read("vol1.pkg")
        try scratch.write("src/Contents/a.txt", "two")
        // The same file under another spelling, too.
        for output in [scratch.path("vol1.pkg"), scratch.path("src/../vol1.pkg")] {
            let result = try await CommandRunner.pkgtool(["create", source, "--previous", scratch.path("vol1.pkg"), "--bump", "minor", "-o", output])
            #expect(result.status == 64, "\(result.stderr)")
            #expect(result.stderr.contains("is the --previous package"))
            #expect(try scratch.read("vol1.pkg") == before)
        }
    }

    @Test func outputIntoAFolderGetsTheDefaultName() async throws {
        let scratch = try Scratch()
        let source = try scratch.content("src", id: "com.acme.vol2", version: "3.1")
        try scratch.mkdir("out")
        let result = try await CommandRunner.pkgtool(["create", source, "-o", scratch.path("out"), "--json"])
        #expect(result.status == 0, "\(result.stdout)")
        #expect(result.json["output"] as? String == scratch.path("out") + "/com.acme.vol2-3.1.pkg")
        #expect(codes(result.json).isEmpty)
        #expect(scratch.list("out") == ["com.acme.vol2-3.1.pkg"])
    }

    @Test func outputInsideTheSourceIsNotPackagedNextTime() async throws {
        let scratch = try Scratch()
        let source = try scratch.content("src", files: ["a.txt": "a"])
        for folder in ["src/Contents", "src"] {
            let output = scratch.path("\(folder)/self.pkg")
            #expect(try await CommandRunner.pkgtool(["create", source, "-o", output]).status == 0)
            let again = try await CommandRunner.pkgtool(["create", source, "-o", output, "--json"])
            #expect(again.status == 0, "\(again.stdout)")
            #expect(again.json["fileCount"] as? Int == 1)
            let listing = try await CommandRunner.shell("bsdtar -tf '\(output)'").stdout
            #expect(!listing.contains("self.pkg"), "\(listing)")
            try FileManager.default.removeItem(atPath: output)
        }
    }

    /// A package is a source too (issue 29 item 2; it was a usage error): rebuilt as it was.
    @Test func aPackageIsASource() async throws {
        let scratch = try Scratch()
        let pkg = try scratch.package("p", version: "1.0", text: ["a.txt": "a"])
        let result = try await CommandRunner.pkgtool(["create", pkg, "-o", scratch.path("o.pkg")])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try scratch.read("o.pkg") == scratch.read("p.pkg"))
    }

    @Test func bumpWithNothingToStartFromIsAUsageError() async throws {
        let scratch = try Scratch()
        try scratch.write("plain/x.dat", "x")
        let result = try await CommandRunner.pkgtool(["create", scratch.path("plain"), "--product-id", "com.acme.x", "--bump", "minor", "-o", scratch.path("o.pkg")])
        #expect(result.status == 64)
        #expect(result.stderr.contains("needs a version to start from"))
        #expect(result.stderr.contains("Usage: pkgtool create"))
        #expect(!FileManager.default.fileExists(atPath: scratch.path("o.pkg")))
    }

    /// The rules come first: a version that was not bumped is `version-not-bumped` (exit 1), even
    /// when the default output is the --previous package itself (issue 21, item 5: it was exit
    /// 64, "writing over it is refused").
    @Test func anUnbumpedVersionIsARuleNotAnOutputProblem() async throws {
        let scratch = try Scratch()
        let source = try scratch.content("src", id: "com.x", version: "1.0", files: ["a.txt": "one"])
        #expect(try await CommandRunner.pkgtool(["create", source], in: scratch.url).status == 0)
        let before = try scratch.read("com.x-1.0.pkg")
        try scratch.write("src/Contents/a.txt", "two")
        let result = try await CommandRunner.pkgtool(["create", source, "--content-version", "1.0", "--previous", "com.x-1.0.pkg", "--json"],
                                                     in: scratch.url)
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        #expect(codes(result.json) == ["version-not-bumped"])
        #expect(try scratch.read("com.x-1.0.pkg") == before)
    }
}
