import Foundation
import Testing
import TestSupport

/// What the messages say (issue 12, items 7, 11 and 12): the missing piece named, one finding
/// for an over-long folder, plurals, no `-` for a missing path, one default per flag.
@Suite(.offThePool) struct MessageTests {
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
        #expect(badName.stderr.contains("error[bad-extension] \(scratch.path("o.xar")): "), "\(badName.stderr)")
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

    /// Every diagnostic line names the file it concerns, in one format: `error[code] FILE:` for a
    /// package as a whole, `error[code] ENTRY:` for an entry of the one package in play, and
    /// `error[code] FILE ENTRY:` when several are (issue 21, item 9).
    @Test func everyLineNamesItsFile() async throws {
        let scratch = try Scratch()
        let good = try scratch.package("good", version: "1.0", text: ["a.txt": "a"])
        try scratch.write("junk.pkg", "not a package at all")
        try scratch.content("bad", id: "com.example.bad", version: "1.0")
        try scratch.write("bad/README", "stray")
        let junk = scratch.path("junk.pkg"), bad = scratch.path("bad"), missing = scratch.path("nosuch.pkg")
        let several = try await CommandRunner.pkgtool(["validate", good, junk, bad, missing])
        let lines = several.stderr.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("error[unreadable-archive] \(junk): not a package") }, "\(several.stderr)")
        #expect(lines.contains { $0.hasPrefix("error[outside-contents] \(bad) README: ") }, "\(several.stderr)")
        #expect(lines.contains("error[unreadable-input] \(missing): No such file or directory"), "\(several.stderr)")
        let one = try await CommandRunner.pkgtool(["validate", bad])
        #expect(one.stderr.hasPrefix("error[outside-contents] README: "), "\(one.stderr)")
        let oneJunk = try await CommandRunner.pkgtool(["validate", junk])
        #expect(oneJunk.stderr.hasPrefix("error[unreadable-archive] \(junk): "), "\(oneJunk.stderr)")
        // One format everywhere: a code is never followed by a bare colon.
        for result in [several, one, oneJunk] {
            #expect(!result.stderr.contains("]:"), "\(result.stderr)")
        }
        let diff = try await CommandRunner.pkgtool(["diff", bad, good])
        #expect(diff.stderr.contains("error[outside-contents] \(bad) README: "), "\(diff.stderr)")
    }

    /// What is no package, or cannot be read, is said as such, never as an empty description
    /// (issue 21, item 11): inspect of a folder without ContentInfo.plist is missing-content-info
    /// (exit 1), of junk prints no table of dashes; a missing file is "not checked", not
    /// "INVALID"; diff of missing files prints no `? ? -> ? ?`.
    @Test func whatIsNoPackageIsSaidAsSuch() async throws {
        let scratch = try Scratch()
        try scratch.write("levels/Contents/a.txt", "a")
        let folder = try await CommandRunner.pkgtool(["inspect", scratch.path("levels")])
        #expect(folder.status == 1)
        #expect(folder.stderr.contains("error[missing-content-info]"), "\(folder.stderr)")
        let folderJSON = try await CommandRunner.pkgtool(["inspect", scratch.path("levels"), "--json"])
        #expect(codes(folderJSON.json) == ["missing-content-info"])
        try scratch.write("junk.pkg", "junk")
        let junk = try await CommandRunner.pkgtool(["inspect", scratch.path("junk.pkg")])
        #expect(junk.status == 1)
        #expect(!junk.stdout.contains("product"), "\(junk.stdout)")
        #expect(junk.stdout.contains("not a package"), "\(junk.stdout)")
        let missing = try await CommandRunner.pkgtool(["validate", scratch.path("nosuch.pkg")])
        #expect(missing.status == 2)
        #expect(missing.stdout == "\(scratch.path("nosuch.pkg")): not checked — it cannot be read\n", "\(missing.stdout)")
        let diff = try await CommandRunner.pkgtool(["diff", scratch.path("nosuch.pkg"), scratch.path("nosuch2.pkg")])
        #expect(diff.status == 2)
        #expect(!diff.stdout.contains("?"), "\(diff.stdout)")
        #expect(diff.stdout.contains("verdict: invalid"))
    }

    /// Help shows each default and each list of values once (issue 21, item 16: `--level` showed
    /// its default twice and `--bump` its values twice), in every command.
    @Test func helpSaysEachDefaultAndEachValueListOnce() async throws {
        let commands = ["create", "validate", "extract", "inspect", "diff", "convert"]
        for command in commands {
            let help = try await CommandRunner.pkgtool(["help", command]).stdout
            let options = help.components(separatedBy: "OPTIONS:").dropFirst().first ?? ""
            // One block per option: a line starting with two spaces and a dash begins one.
            var blocks: [String] = []
            for line in options.split(separator: "\n", omittingEmptySubsequences: false) {
                if line.hasPrefix("  -") { blocks.append(String(line)) } else if !blocks.isEmpty { blocks[blocks.count - 1] += " " + line }
            }
            for block in blocks {
                let text = block.split(separator: " ").joined(separator: " ")
                #expect(text.lowercased().components(separatedBy: "default").count <= 2, "\(command): \(text)")
                guard let values = text.range(of: "(values: ") else { continue }
                let listed = text[values.upperBound...].prefix { $0 != ";" && $0 != ")" }.components(separatedBy: ", ")
                let prose = String(text[..<values.lowerBound])
                #expect(!listed.allSatisfy { prose.contains($0) }, "\(command): \(text)")
            }
        }
    }

    /// publish's usage shows its packages as required, as they are (issue 21, item 16).
    @Test func publishUsageShowsThePackagesAsRequired() async throws {
        let help = try await CommandRunner.pkgtool(["help", "publish"]).stdout
        let usage = try #require(help.split(separator: "\n").first { $0.contains("USAGE:") })
        #expect(usage.contains("<packages> ..."), "\(usage)")
        #expect(!usage.contains("[<packages>"), "\(usage)")
        let bare = try await CommandRunner.pkgtool(["publish", "--to", "/nonexistent-folder-for-a-usage-error"])
        #expect(bare.status == 64 && bare.stderr.contains("<packages>"), "\(bare.stderr)")
    }

    /// convert says a policy as its flag is spelt (issue 21, item 16: `download policy onDemand`).
    @Test func convertSaysThePolicyAsTheFlagSpellsIt() async throws {
        let scratch = try Scratch()
        let pkg = try scratch.package("p", version: "1.0", text: ["a.txt": "a"])
        let result = try await CommandRunner.pkgtool(["convert", pkg, "--to", "background-assets", "--out", scratch.path("out")])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("download policy on-demand"), "\(result.stdout)")
    }
}
