import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// What users of a command-line tool expect around it: `make install` (binary, man page, bash, zsh
/// and fish completions, with DESTDIR) and `make uninstall`, completions that know every
/// subcommand, a `--version` that matches the README, and PkgKit's DocC catalog.
@Suite(.offThePool) struct DistributionTests {
    static let root = CommandRunner.packageRoot.path
    /// Where `make man` (run by `make test`) leaves the man page.
    static let manPage = root + "/build/man/pkgtool.1"

    /// The subcommands `pkgtool --help` lists.
    static func subcommands() throws -> [String] {
        let help = try CommandRunner.pkgtool(["--help"]).stdout
        let section = help.components(separatedBy: "SUBCOMMANDS:").dropFirst().first ?? ""
        // The list ends at the first blank line ("See 'pkgtool help <subcommand>'…" follows).
        let list = section.split(separator: "\n", omittingEmptySubsequences: false).dropFirst().prefix { !$0.isEmpty }
        return list.compactMap { line -> String? in
            // "  name   abstract": a name at two spaces; continuation lines are indented further.
            guard line.hasPrefix("  "), !line.hasPrefix("   "), let name = line.split(separator: " ").first else { return nil }
            return name.allSatisfy({ $0.isLetter || $0 == "-" }) ? String(name) : nil
        }
    }

    private static func mode(_ path: String) -> Int {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_mode & 0o7777) : -1
    }

    @Test func helpListsTheSubcommands() throws {
        let names = try Self.subcommands()
        #expect(Set(["create", "validate", "extract", "inspect", "diff", "convert"]).isSubset(of: Set(names)), "\(names)")
    }

    /// `make install DESTDIR=… PREFIX=/usr` lays out the binary, the man page and the three
    /// completion scripts; `make uninstall` removes them all again.
    @Test func installAndUninstallIntoDestdir() throws {
        try #require(FileManager.default.fileExists(atPath: Self.manPage),
                     "no man page at \(Self.manPage): `make test` makes it (`make man MAN_CONFIG=debug`)")
        let s = try Scratch()
        let common = ["DESTDIR=" + s.path("dest"), "PREFIX=/usr", "PKGTOOL_BIN=" + CommandRunner.pkgtool,
                      "COMPLETIONS_DIR=" + s.path("completions")]
        let install = try CommandRunner.run("/usr/bin/make", ["--no-print-directory", "-C", Self.root, "install"] + common)
        try #require(install.status == 0, "make install failed:\n\(install.stdout)\(install.stderr)")

        let usr = s.path("dest/usr")
        let expected = [
            "bin/pkgtool": 0o755,
            "share/man/man1/pkgtool.1": 0o644,
            "share/bash-completion/completions/pkgtool": 0o644,
            "share/zsh/site-functions/_pkgtool": 0o644,
            "share/fish/vendor_completions.d/pkgtool.fish": 0o644,
        ]
        for (path, mode) in expected {
            #expect(Self.mode(usr + "/" + path) == mode, "\(path): mode \(String(Self.mode(usr + "/" + path), radix: 8))")
        }
        let installed = try CommandRunner.run(usr + "/bin/pkgtool", ["--version"])
        #expect(installed.status == 0 && !installed.stdout.isEmpty)
        #if os(Linux)
        // Installed stripped: no symbol table, no debug information.
        let sections = try CommandRunner.run("/usr/bin/readelf", ["-S", "-W", usr + "/bin/pkgtool"]).stdout
        #expect(sections.contains(".text") && !sections.contains(".symtab") && !sections.contains(".debug_info"), "not stripped:\n\(sections)")
        #endif
        let man = String(decoding: try s.read("dest/usr/share/man/man1/pkgtool.1"), as: UTF8.self)
        #expect(man.contains(".Dt PKGTOOL 1"), "not an mdoc man page")
        for name in try Self.subcommands() {
            #expect(man.contains(name), "the man page does not mention \(name)")
        }
        // The aliases with the names they stand for, and every exit status.
        for line in [".It Fl o , -to , -output Ar DIR", ".It Fl o , -out , -output Ar NAME", ".It Fl -product , -product-id Ar ID",
                     ".It 0", ".It 1", ".It 2", ".It 3", ".It 64", ".It 130", ".It 143"] {
            #expect(man.contains(line), "the man page lacks \(line)")
        }
        // The installed scripts are what the binary generates.
        for (shell, path) in [("bash", "share/bash-completion/completions/pkgtool"), ("zsh", "share/zsh/site-functions/_pkgtool"),
                              ("fish", "share/fish/vendor_completions.d/pkgtool.fish")] {
            let generated = try CommandRunner.pkgtool(["--generate-completion-script", shell]).stdout
            #expect(s.text("dest/usr/" + path) == generated, "\(shell)")
        }

        let uninstall = try CommandRunner.run("/usr/bin/make", ["--no-print-directory", "-C", Self.root, "uninstall"] + common)
        #expect(uninstall.status == 0, "\(uninstall.stderr)")
        for path in expected.keys { #expect(!exists(usr + "/" + path), "\(path) is still installed") }
    }

    /// Each completion script names every subcommand `--help` lists (and so every one added later).
    @Test(arguments: ["bash", "zsh", "fish"])
    func completionScriptsKnowEverySubcommand(shell: String) throws {
        let script = try CommandRunner.pkgtool(["--generate-completion-script", shell])
        #expect(script.status == 0)
        for name in try Self.subcommands() {
            #expect(script.stdout.contains(name), "\(shell) completion lacks \(name)")
        }
        #expect(script.stdout.contains("download-policy") && script.stdout.contains("visionOS"), "convert's options")
        if shell == "bash" {
            let s = try Scratch()
            try s.write("c.bash", script.stdout)
            #expect(try CommandRunner.run("/bin/bash", ["-n", s.path("c.bash")]).status == 0, "not valid bash")
        }
    }

    /// `pkgtool --version` prints the version the README states, and the README's dependency
    /// example asks for it.
    @Test func versionMatchesTheReadme() throws {
        let version = try CommandRunner.pkgtool(["--version"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(!version.isEmpty)
        let readme = try String(contentsOfFile: Self.root + "/README.md", encoding: .utf8)
        let stated = readme.firstMatch(of: /This README describes pkgtool \*\*([0-9.]+)\*\*/)?.1
        #expect(stated.map(String.init) == version, "README states \(stated.map(String.init) ?? "no version"), --version says \(version)")
        #expect(readme.contains("from: \"\(version)\""), "the README's Package.swift example asks for another version")
    }

    /// PkgKit's DocC catalog builds with every link resolved, and its pages hold the layers'
    /// symbols (PkgKit re-exports them): `scripts/docs.sh`, what `make docs` runs, on the debug
    /// build the tests run on (seconds, not a build; it takes no package lock).
    @Test func docCatalogBuildsWithEveryLinkResolved() throws {
        let s = try Scratch()
        try #require(FileManager.default.fileExists(atPath: Self.root + "/.build/debug/Modules/PkgKit.swiftmodule"), "no debug build of PkgKit")
        let archive = s.path("PkgKit.doccarchive")
        let docs = try CommandRunner.run("/usr/bin/env", ["bash", Self.root + "/scripts/docs.sh", archive])
        #expect(docs.status == 0, "docs.sh:\n\(docs.stdout)\(docs.stderr)")
        for page in ["data/documentation/pkgkit.json", "data/documentation/pkgkit/gettingstarted.json",
                     "data/documentation/pkgkit/installer.json", "data/documentation/pkgkit/assetpackconverter.json",
                     "data/documentation/pkgkit/syncreport.json"] {
            #expect(FileManager.default.fileExists(atPath: archive + "/" + page), "\(page) missing from the archive")
        }
        let makefile = try String(contentsOfFile: Self.root + "/Makefile", encoding: .utf8)
        #expect(makefile.contains("scripts/docs.sh $(DOCS_DIR)/PkgKit.doccarchive"), "make docs no longer runs scripts/docs.sh")
    }

    /// The man page lists every exit status and has examples (issue 21, item 16: EXIT STATUS said
    /// only ">0 if an error occurs", and there were no EXAMPLES).
    @Test func manPageListsTheExitStatusesAndExamples() throws {
        try #require(FileManager.default.fileExists(atPath: Self.manPage),
                     "no man page at \(Self.manPage): `make test` makes it (`make man MAN_CONFIG=debug`)")
        let man = try String(contentsOfFile: Self.manPage, encoding: .utf8)
        #expect(!man.contains(".Ex -std"), "the generic exit status is still there")
        let statuses = man.components(separatedBy: ".Sh \"EXIT STATUS\"").dropFirst().first ?? ""
        for status in ["0", "1", "2", "64", "130", "143"] {
            #expect(statuses.contains(".It \(status)\n"), "exit status \(status) is not listed")
        }
        let examples = man.components(separatedBy: ".Sh EXAMPLES").dropFirst().first ?? ""
        for command in ["create", "validate", "extract", "convert"] {
            #expect(examples.contains("pkgtool \(command) "), "no example of \(command)")
        }
    }

    /// `make install` installs the statically linked release binary, and making the man page
    /// does not rebuild it otherwise (issue 21, item 4: `make man` rebuilt `.build/release/pkgtool`
    /// without --static-swift-stdlib, and `make build` and `make man` rebuilt each other).
    @Test func installKeepsTheStaticBinary() throws {
        let plan = try CommandRunner.run("/usr/bin/make", ["-n", "--no-print-directory", "-C", Self.root, "install"])
        #expect(plan.status == 0, "\(plan.stderr)")
        #expect(!plan.stdout.contains("plugin generate-manual"), "the man page still comes from the plugin, which rebuilds the package")
        let releaseBuilds = plan.stdout.split(separator: "\n").filter { $0.contains("build -c release") }
        #expect(!releaseBuilds.isEmpty)
        #if os(Linux)
        for line in releaseBuilds { #expect(line.contains("--static-swift-stdlib"), "a release build without the static flags: \(line)") }
        #endif
        #expect(plan.stdout.contains("install -m 0755 -s .build/release/pkgtool "), "installed unstripped: \(plan.stdout)")
    }

    #if os(Linux)
    /// pkgtool links neither libcurl nor FoundationNetworking: PkgKit leaves URLSession out on
    /// Linux, where libcurl brought some thirty shared libraries with it.
    @Test func pkgtoolLinksNoLibcurl() throws {
        let libraries = try CommandRunner.run("/usr/bin/ldd", [CommandRunner.pkgtool])
        try #require(libraries.status == 0, "\(libraries.stderr)")
        #expect(libraries.stdout.contains("libarchive"), "ldd must list pkgtool's own libraries:\n\(libraries.stdout)")
        #expect(!libraries.stdout.contains("libcurl") && !libraries.stdout.contains("FoundationNetworking"), "\(libraries.stdout)")
    }
    #endif
}
