import Foundation
import Testing
import TestSupport

/// What `bad-extension` and `publish` say about packages that are not a .pkg (issue 29 item 2):
/// what is true now, and advice that works. Renaming a zip `.pkg` made a package every device
/// downloads whole; the advice is to make a .pkg from it.
@Suite(.offThePool) struct BadExtensionAdviceTests {
    private func desertZip(_ scratch: Scratch) async throws -> String {
        try scratch.content("Desert Pack", id: "com.acme.desert", version: "1.0", files: ["sand.txt": "sand"])
        try await CommandRunner.shell("zip -qr 'Desert Pack.zip' 'Desert Pack'", in: scratch.url)
        return scratch.path("Desert Pack.zip")
    }

    @Test func aZipIsToldHowToBecomeAPackage() async throws {
        let scratch = try Scratch()
        let zip = try await desertZip(scratch)
        let result = try await CommandRunner.pkgtool(["validate", zip])
        #expect(result.status == 1)
        #expect(result.stderr.contains("error[bad-extension] \(zip): 'Desert Pack.zip' is a zip archive, not a content package"), "\(result.stderr)")
        #expect(result.stderr.contains("make a .pkg from it with `pkgtool create '\(zip)'`"), "\(result.stderr)")
        #expect(!result.stderr.contains("the store accepts"))
        #expect(!result.stderr.contains("rename it"))
        // The JSON says the same.
        let json = try await CommandRunner.pkgtool(["validate", zip, "--json"])
        let message = ((json.json["packages"] as? [[String: Any]])?.first?["diagnostics"] as? [[String: Any]])?.first?["message"] as? String
        #expect(message?.hasSuffix("with `pkgtool create '\(zip)'`") == true, "\(json.stdout)")
        // Following the advice gives a package that passes.
        #expect(try await CommandRunner.pkgtool(["create", zip, "-o", scratch.path("desert.pkg")]).status == 0)
        #expect(try await CommandRunner.pkgtool(["validate", scratch.path("desert.pkg")]).status == 0)
    }

    /// A content package (xar) under another name only needs renaming.
    @Test func aMisnamedXarIsToldToRename() async throws {
        let scratch = try Scratch()
        let source = try scratch.content("src")
        #expect(try await CommandRunner.pkgtool(["create", source, "-o", scratch.path("a.pkg")]).status == 0)
        try FileManager.default.copyItem(atPath: scratch.path("a.pkg"), toPath: scratch.path("a.zip"))
        let result = try await CommandRunner.pkgtool(["validate", scratch.path("a.zip")])
        #expect(result.stderr.contains("is a content package (xar) whose name does not end in .pkg: rename it to end in .pkg"), "\(result.stderr)")
        #expect(!result.stderr.contains("pkgtool create"))
    }

    /// `create --format zip -o x.zip` is refused for the output's name, and says so about the
    /// output, not the source.
    @Test func createNamesItsOutput() async throws {
        let scratch = try Scratch()
        let source = try scratch.content("src")
        let output = scratch.path("x.zip")
        let result = try await CommandRunner.pkgtool(["create", source, "--format", "zip", "-o", output])
        #expect(result.status == 1)
        #expect(result.stderr.contains("error[bad-extension] \(output): 'x.zip' does not end in .pkg"), "\(result.stderr)")
        #expect(!result.stderr.contains("error[bad-extension] \(source)"))
        let json = try await CommandRunner.pkgtool(["create", source, "--format", "zip", "-o", output, "--json"])
        #expect((json.json["diagnostics"] as? [[String: Any]])?.first?["path"] as? String == output, "\(json.stdout)")
    }

    /// A zip published under a .pkg name is served whole to every device: publish says so, and
    /// how to make a .pkg.
    @Test func publishWarnsThatAZipIsDownloadedWhole() async throws {
        let scratch = try Scratch()
        let zip = try await desertZip(scratch)
        let renamed = scratch.path("desert.pkg")
        try FileManager.default.copyItem(atPath: zip, toPath: renamed)
        let result = try await CommandRunner.pkgtool(["publish", renamed, "--to", scratch.path("site")])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("warning: \(renamed) is a zip archive, not a xar: devices will always download it whole"), "\(result.stderr)")
        #expect(result.stderr.contains("make a .pkg from it with `pkgtool create \(renamed)`"), "\(result.stderr)")
        let json = try await CommandRunner.pkgtool(["publish", renamed, "--to", scratch.path("site"), "--json"])
        #expect((json.json["packages"] as? [[String: Any]])?.first?["format"] as? String == "zip", "\(json.stdout)")
        // A .pkg made from it is published without the warning.
        #expect(try await CommandRunner.pkgtool(["create", zip, "-o", scratch.path("made.pkg"), "--content-version", "1.0"]).status == 0)
        try await CommandRunner.shell("rm -r site", in: scratch.url)
        let made = try await CommandRunner.pkgtool(["publish", scratch.path("made.pkg"), "--to", scratch.path("site")])
        #expect(made.status == 0, "\(made.stderr)")
        #expect(!made.stderr.contains("download it whole"), "\(made.stderr)")
    }
}
