import Foundation
import Testing
import TestSupport

/// Damaged input is never reported on as if it were whole: diff reads both packages in full and
/// says `invalid` (item 2); inspect checks that the container is whole, and nothing but a real
/// signature makes a container (item 3).
@Suite(.offThePool) struct DamagedPackageTests {
    /// A good package and a copy whose heap is `cut` bytes short of what its TOC declares.
    static func truncatedPair(_ scratch: Scratch, cut: Int = 100) async throws -> (good: String, truncated: String) {
        let good = try scratch.package("good", version: "1.1", files: ["a.txt": Data("a".utf8), "z.bin": randomData(20_000)]).pkg
        let data = try Data(contentsOf: URL(fileURLWithPath: good))
        try data.prefix(data.count - cut).write(to: URL(fileURLWithPath: scratch.path("truncated.pkg")))
        return (good, scratch.path("truncated.pkg"))
    }

    @Test func diffOfATruncatedPackageIsInvalid() async throws {
        let scratch = try Scratch()
        let (good, truncated) = try await Self.truncatedPair(scratch)
        let old = try scratch.package("old", version: "1.0", text: ["a.txt": "a"])
        for (a, b, damaged) in [(old, truncated, "new"), (truncated, good, "old")] {
            let result = try await CommandRunner.pkgtool(["diff", a, b, "--json"])
            #expect(result.status == 1)
            let json = result.json
            #expect(json["verdict"] as? String == "invalid")
            #expect((json["added"] as? [String])?.isEmpty == true && (json["changed"] as? [String])?.isEmpty == true)
            let side = json[damaged] as? [String: Any] ?? [:]
            #expect(codes(side) == ["unreadable-archive"], "\(side)")
        }
        let text = try await CommandRunner.pkgtool(["diff", old, truncated])
        #expect(text.status == 1)
        #expect(text.stdout.contains("verdict: invalid"))
        #expect(text.stderr.contains("error[unreadable-archive]"))
        // An invalid package (no ContentInfo.plist) is not compared either.
        try scratch.write("bare/Contents/a.txt", "a")
        #expect(try await CommandRunner.pkgtool(["diff", old, scratch.path("bare"), "--json"]).json["verdict"] as? String == "invalid")
        #expect(try await CommandRunner.pkgtool(["diff", old, good]).status == 0)
    }

    @Test func inspectRefusesAContainerThatIsNotWhole() async throws {
        let scratch = try Scratch()
        let (good, truncated) = try await Self.truncatedPair(scratch)
        let whole = try await CommandRunner.pkgtool(["inspect", good, "--json"])
        #expect(whole.status == 0)
        #expect((whole.json["diagnostics"] as? [Any])?.isEmpty == true)
        for extra in [[], ["--files"]] {
            let result = try await CommandRunner.pkgtool(["inspect", truncated, "--json"] + extra)
            #expect(result.status == 1, "\(extra)")
            #expect(codes(result.json) == ["unreadable-archive"], "\(extra): \(result.stdout)")
        }
        let text = try await CommandRunner.pkgtool(["inspect", truncated])
        #expect(text.status == 1)
        #expect(text.stderr.contains("error[unreadable-archive] \(truncated): the package is truncated"), "\(text.stderr)")
        #expect(try await CommandRunner.pkgtool(["validate", truncated]).status == 1)
    }

    @Test func zipWithoutItsCentralDirectoryIsUnreadable() async throws {
        let scratch = try Scratch()
        try scratch.content("src")
        try await CommandRunner.shell("""
            cd src && python3 -c "import zipfile; z = zipfile.ZipFile('../z.pkg', 'w'); [z.write(n) for n in ['ContentInfo.plist', 'Contents', 'Contents/a.txt']]; z.close()" && cd .. \
            && python3 -c "d = open('z.pkg', 'rb').read(); open('cut.pkg', 'wb').write(d[:d.index(b'PK\\x01\\x02')])"
            """, in: scratch.url)
        #expect(try await CommandRunner.pkgtool(["validate", scratch.path("z.pkg")]).status == 0)
        for command in ["inspect", "validate"] {
            let result = try await CommandRunner.pkgtool([command, scratch.path("cut.pkg"), "--json"])
            #expect(result.status == 1, "\(command)")
            #expect(codes(result.json) == ["unreadable-archive"], "\(command): \(result.stdout)")
            #expect(result.stdout.contains("central directory"))
        }
    }

    @Test func randomBytesAreNoContainer() async throws {
        let scratch = try Scratch()
        try randomData(4096).write(to: URL(fileURLWithPath: scratch.path("random.pkg")))
        let inspect = try await CommandRunner.pkgtool(["inspect", scratch.path("random.pkg"), "--json"])
        #expect(inspect.status == 1)
        #expect(inspect.json["format"] is NSNull)
        #expect(inspect.json["compression"] is NSNull)
        #expect(codes(inspect.json) == ["unreadable-archive"])
        let validate = try await CommandRunner.pkgtool(["validate", scratch.path("random.pkg"), "--json"])
        #expect(validate.status == 1)
        let package = (validate.json["packages"] as? [[String: Any]])?.first ?? [:]
        #expect(package["format"] is NSNull)
        #expect(codes(validate.json) == ["unreadable-archive"])
        #expect(validate.stdout.contains("no xar, zip or tar signature"))
    }

    /// A xar cut short is a xar (its signature says so), never "tar", and every command describes
    /// it in the same words: validate and inspect print the same lines (issue 21, item 10: cut to
    /// 100 bytes it was `tar` with a raw XML parser message, and validate said 0 files where
    /// inspect said 10).
    @Test(arguments: [100, 1000, -5])
    func aCutXarIsOneDamagedXar(keeping: Int) async throws {
        let scratch = try Scratch()
        var files: [String: String] = [:]
        for i in 0..<10 { files["f\(i).txt"] = "file \(i)" }
        let good = try scratch.package("good", version: "1.0", text: files)
        let bytes = try scratch.read("good.pkg")
        let cut = scratch.path("cut.pkg")
        try bytes.prefix(keeping > 0 ? keeping : bytes.count + keeping).write(to: URL(fileURLWithPath: cut))
        #expect(try await CommandRunner.pkgtool(["validate", good]).status == 0)
        let validate = try await CommandRunner.pkgtool(["validate", cut])
        let inspect = try await CommandRunner.pkgtool(["inspect", cut])
        #expect(validate.status == 1 && inspect.status == 1)
        #expect(validate.stderr == inspect.stderr, "validate: \(validate.stderr)inspect: \(inspect.stderr)")
        #expect(validate.stdout == inspect.stdout, "validate: \(validate.stdout)inspect: \(inspect.stdout)")
        #expect(validate.stderr.hasPrefix("error[unreadable-archive] \(cut): the package is truncated"), "\(validate.stderr)")
        #expect(validate.stdout.contains("a xar that cannot be read whole"), "\(validate.stdout)")
        #expect(!validate.stdout.contains("0 files"))
        let json = try await CommandRunner.pkgtool(["validate", cut, "--json"])
        #expect((json.json["packages"] as? [[String: Any]])?.first?["format"] as? String == "xar", "\(json.stdout)")
    }
}
