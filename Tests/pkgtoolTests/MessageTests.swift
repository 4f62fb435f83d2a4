import Foundation
import Testing
import TestSupport

/// What the messages say (issue 12, items 7, 11 and 12): the missing piece named, one finding
/// for an over-long folder, plurals, no `-` for a missing path, one default per flag.
@Suite struct MessageTests {
    @Test func createSaysWhatIsMissing() async throws {
        let scratch = try Scratch()
        try scratch.write("plain/x.dat", "x")
        try scratch.write("plain/ContentInfo.plist", plist(id: "com.acme.p", version: "1.0"))
        let noContents = try await CommandRunner.pkgtool(["create", scratch.path("plain"), "-o", scratch.path("o.pkg")])
        #expect(noContents.status == 1)
        #expect(noContents.stderr.contains("has a ContentInfo.plist but no Contents/ folder"), "\(noContents.stderr)")
        #expect(!noContents.stderr.contains("no ContentInfo.plist at the package root"))
        try FileManager.default.removeItem(atPath: scratch.path("plain/ContentInfo.plist"))
        let idOnly = try await CommandRunner.pkgtool(["create", scratch.path("plain"), "--product-id", "com.acme.p", "-o", scratch.path("o.pkg")])
        #expect(idOnly.status == 1)
        #expect(idOnly.stderr.contains("--product-id was given without --content-version"), "\(idOnly.stderr)")
        // The closing line counts what stopped it instead of blaming the source.
        #expect(idOnly.stderr.contains("create: 1 error, 0 warnings; nothing was written"))
        let badName = try await CommandRunner.pkgtool(["create", scratch.path("plain"), "--product-id", "com.acme.p", "--content-version", "1.0", "-o", scratch.path("o.xar")])
        #expect(badName.stderr.contains("error[bad-extension]: "), "\(badName.stderr)")
        #expect(!badName.stderr.contains("the source is invalid"))
    }

    /// Nested folders deeper than the path limit: one finding, and no raw "File name too long"
    /// when they go deeper than the system's own limit.
    @Test func overLongFolderIsOneFindingNotAnIOError() async throws {
        let scratch = try Scratch()
        try scratch.content("deep")
        let name = String(repeating: "d", count: 200)
        try await CommandRunner.shell("""
            python3 -c "
            import os
            os.chdir('deep/Contents')
            for depth in range(25):
                os.makedirs('\(name)', exist_ok=True)
                os.chdir('\(name)')
                if depth in (5, 24):
                    for i in range(3): open(f'f{i}', 'w').write('x')
            "
            """, in: scratch.url)
        let result = try await CommandRunner.pkgtool(["validate", scratch.path("deep")])
        #expect(result.status == 1)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(result.stderr.prefix(600))")
        #expect(lines.first?.hasPrefix("error[unsafe-path] Contents/") == true)
        #expect(!result.stderr.contains("too long"))
        #expect(try await CommandRunner.pkgtool(["create", scratch.path("deep"), "-o", scratch.path("d.pkg")]).status == 1)
    }

    @Test func helpShowsOneDefaultForJobs() async throws {
        let help = try await CommandRunner.pkgtool(["help", "create"]).stdout
        let jobs = help.components(separatedBy: "--jobs").dropFirst().first ?? ""
        let text = jobs.components(separatedBy: "--max-size").first ?? ""
        #expect(text.contains("default: all cores"))
        #expect(text.components(separatedBy: "default").count == 2, "\(text)")
    }

    @Test func inspectFilesHasColumnHeaders() async throws {
        let scratch = try Scratch()
        let pkg = try scratch.package("p", version: "1.0", text: ["a.txt": "a"])
        let lines = try await CommandRunner.pkgtool(["inspect", pkg, "--files"]).stdout.split(separator: "\n").map(String.init)
        let header = try #require(lines.firstIndex { $0.contains("type") && $0.contains("stored") && $0.contains("sha1") && $0.hasSuffix("path") })
        #expect(lines[header + 1].contains("ContentInfo.plist") || lines[header + 1].contains("Contents"))
    }
}
