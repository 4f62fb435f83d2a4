import Foundation
import Testing
import TestSupport

/// `--json` and `--quiet` before or after the command name, suggestions for a misspelt command,
/// and exit 64 for every usage error, bare `pkgtool` included (issue 12, items 8 and 9).
@Suite struct GlobalOptionsTests {
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
}
