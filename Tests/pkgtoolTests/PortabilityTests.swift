import Foundation
import Testing
import TestSupport

/// The core an app links: a separate package that depends on the `PkgKit` product alone installs
/// a xar package without libarchive, and says clearly what it cannot read.
@Suite(.offThePool) struct PortabilityTests {
    static let checkPackage = CommandRunner.packageRoot.appendingPathComponent("Tests/Portability").path
    static let scratchPath = CommandRunner.packageRoot.appendingPathComponent(".build/portability").path

    @Test(.timeLimit(.minutes(30))) func coreAloneInstallsAXarAndLinksNoLibarchive() throws {
        let build = try CommandRunner.run("/bin/sh", ["-c", "swift build --package-path '\(Self.checkPackage)' --scratch-path '\(Self.scratchPath)' 2>&1"])
        let errors = build.stdout.split(separator: "\n").filter { $0.contains("error") }.prefix(20).joined(separator: "\n")
        try #require(build.status == 0, "building the portability check failed:\n\(errors)\n…\n\(build.stdout.suffix(1500))")
        let binary = Self.scratchPath + "/debug/portability-check"

        let scratch = try Scratch()
        let source = try scratch.content("src", id: "com.example.portable", version: "1.2", files: ["a.txt": "hello\n", "art/b.txt": "world\n"],
                                         links: ["l.txt": "a.txt"])
        #expect(try CommandRunner.pkgtool(["create", source, "-o", scratch.path("p.pkg")]).status == 0)
        #expect(try CommandRunner.pkgtool(["create", source, "--format", "zip", "-o", scratch.path("z.pkg")]).status == 0)

        let run = try CommandRunner.run(binary, [scratch.documents, scratch.path("p.pkg"), scratch.path("z.pkg")])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("installed com.example.portable 1.2 at \(scratch.documents)/com.example.portable/1.2"))
        #expect(differences(scratch.documents + "/com.example.portable/1.2", expected: snapshot(source + "/Contents")).isEmpty)
        #expect(readRecord(scratch.documents + "/com.example.portable")?.version == "1.2")
        // The zip is refused with a diagnostic that names the container and the library that reads it.
        let zipLine = run.stdout.split(separator: "\n").first { $0.contains("z.pkg: unreadable-archive") }
        #expect(zipLine?.contains("zip") == true && zipLine?.contains("PkgKitArchive") == true, "\(run.stdout)")

        let libraries = try CommandRunner.run("/usr/bin/ldd", [binary]).stdout
        #expect(libraries.contains("libxml2"), "ldd must list the core's own libraries:\n\(libraries)")
        #expect(!libraries.contains("libarchive"), "the core pulled in libarchive:\n\(libraries)")
    }
}
