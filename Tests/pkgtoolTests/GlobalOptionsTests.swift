import Foundation
import PkgKit
import Testing
import TestSupport

/// `--json` and `--quiet` before or after the command name, suggestions for a misspelt command,
/// and exit 64 for every usage error, bare `pkgtool` included (issue 12, items 8 and 9).
@Suite(.offThePool) struct GlobalOptionsTests {
    @Test func jsonAndQuietGoBeforeOrAfterTheCommand() async throws {
        let scratch = try Scratch()
        let good = try scratch.content("good")
        for arguments in [["--json", "validate", good], ["validate", "--json", good], ["validate", good, "--json"], ["--json", "validate", good, "--json"]] {
            let result = try await CommandRunner.pkgtool(arguments)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            #expect(result.json["valid"] as? Bool == true, "\(arguments)")
        }
        let quiet = try await CommandRunner.pkgtool(["--quiet", "create", good, "-o", scratch.path("q.pkg")])
        #expect(quiet.status == 0)
        #expect(quiet.stdout.isEmpty && quiet.stderr.isEmpty)
        let help = try await CommandRunner.pkgtool(["--help"])
        #expect(help.stdout.contains("--json") && help.stdout.contains("--quiet"))
    }

    @Test func misspeltCommandGetsTheNearestOne() async throws {
        let result = try await CommandRunner.pkgtool(["craete", "src", "-o", "x.pkg"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("'craete' is not a pkgtool command. Did you mean 'create'?"), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        let far = try await CommandRunner.pkgtool(["--json", "frobnicate"])
        #expect(far.status == 64)
        #expect(!far.stderr.contains("Did you mean"))
        #expect(far.stderr.contains("create, validate, extract, inspect, diff"))
    }

    @Test func barePkgtoolAndUsageErrorsExit64() async throws {
        let bare = try await CommandRunner.pkgtool([])
        #expect(bare.status == 64)
        #expect(bare.stdout.isEmpty)
        #expect(bare.stderr.contains("SUBCOMMANDS"))
        for arguments in [["--json"], ["validate", "--no-such-flag", "x"], ["inspect"], ["diff", "a"]] {
            #expect(try await CommandRunner.pkgtool(arguments).status == 64, "\(arguments)")
        }
        #expect(try await CommandRunner.pkgtool(["help", "validate"]).status == 0)
    }

    /// `--version` prints the version only alone; given to a command, or with anything else, it
    /// is a usage error that writes nothing, and on create it points to --content-version
    /// (issue 21, item 1: `create … --version 1.0` printed 0.2.0, exited 0 and created nothing).
    @Test func versionOnlyAlone() async throws {
        let scratch = try Scratch()
        let plain = try scratch.mkdir("levels")
        try scratch.write("levels/a.txt", "a")
        let alone = try await CommandRunner.pkgtool(["--version"])
        #expect(alone.status == 0)
        #expect(alone.stdout == PkgKitVersion.current + "\n")
        let create = try await CommandRunner.pkgtool(["create", plain, "--product-id", "com.x", "--version", "1.0"], in: scratch.url)
        #expect(create.status == 64, "\(create.stdout)")
        #expect(create.stdout.isEmpty)
        #expect(create.stderr.contains("--content-version"), "\(create.stderr)")
        #expect(scratch.list(".").filter { $0.hasSuffix(".pkg") }.isEmpty)
        for arguments in [["validate", "--version", plain], ["--version", "--json"], ["--json", "--version"], ["inspect", plain, "--version=2"]] {
            let result = try await CommandRunner.pkgtool(arguments)
            #expect(result.status == 64, "\(arguments): \(result.stdout)")
            #expect(result.stdout.isEmpty, "\(arguments)")
        }
    }

    /// Every usage error points to the same help, whether the argument parser or the command
    /// found it (issue 21, item 16: `pkgtool help create` in one, `pkgtool create --help` in another).
    @Test func usageErrorsPointToTheSameHelp() async throws {
        let scratch = try Scratch()
        try scratch.write("plain/a.txt", "a")
        let parser = try await CommandRunner.pkgtool(["create", scratch.path("plain"), "--level", "12"])
        let command = try await CommandRunner.pkgtool(["create", scratch.path("plain"), "--product-id", "com.x", "--bump", "minor"])
        for result in [parser, command] {
            #expect(result.status == 64)
            #expect(result.stderr.contains("Usage: pkgtool create "), "\(result.stderr)")
            #expect(result.stderr.contains("See 'pkgtool create --help' for more information."), "\(result.stderr)")
        }
        #expect(command.stderr.contains("needs a version to start from"))
    }
}
