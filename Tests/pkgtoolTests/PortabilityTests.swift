import Foundation
import Testing
import TestSupport

/// The core an app links: `portability-check`, a program that depends on the `PkgKit` library
/// alone (built with everything else), installs a xar package without libarchive, and says
/// clearly what it cannot read.
@Suite(.offThePool) struct PortabilityTests {
    /// Built beside `pkgtool` by `swift build --build-tests`.
    static let binary = URL(fileURLWithPath: CommandRunner.pkgtool).deletingLastPathComponent().appendingPathComponent("portability-check").path

    @Test func coreAloneInstallsAXarAndLinksNoLibarchive() throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.binary),
                     "no \(Self.binary): `swift build --build-tests` builds it with pkgtool")

        let scratch = try Scratch()
        let source = try scratch.content("src", id: "com.example.portable", version: "1.2", files: ["a.txt": "hello\n", "art/b.txt": "world\n"],
                                         links: ["l.txt": "a.txt"])
        #expect(try CommandRunner.pkgtool(["create", source, "-o", scratch.path("p.pkg")]).status == 0)
        #expect(try CommandRunner.pkgtool(["create", source, "--format", "zip", "-o", scratch.path("z.pkg")]).status == 0)

        let run = try CommandRunner.run(Self.binary, [scratch.documents, scratch.path("p.pkg"), scratch.path("z.pkg")])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("installed com.example.portable 1.2 at \(scratch.documents)/com.example.portable/1.2"))
        #expect(differences(scratch.documents + "/com.example.portable/1.2", expected: snapshot(source + "/Contents")).isEmpty)
        #expect(readRecord(scratch.documents + "/com.example.portable")?.version == "1.2")
        // The zip is refused with a diagnostic that names the container and the library that reads it.
        let zipLine = run.stdout.split(separator: "\n").first { $0.contains("z.pkg: unreadable-archive") }
        #expect(zipLine?.contains("zip") == true && zipLine?.contains("PkgKitArchive") == true, "\(run.stdout)")

        let libraries = try CommandRunner.run("/usr/bin/ldd", [Self.binary]).stdout
        #expect(libraries.contains("libxml2"), "ldd must list the core's own libraries:\n\(libraries)")
        #expect(!libraries.contains("libarchive"), "the core pulled in libarchive:\n\(libraries)")
        #if os(Linux)
        // URLSession is Apple's only: on Linux FoundationNetworking would bring libcurl and the
        // libraries it needs into every app using PkgKit.
        #expect(!libraries.contains("libcurl") && !libraries.contains("FoundationNetworking"),
                "the core pulled in FoundationNetworking:\n\(libraries)")
        #endif
    }
}
