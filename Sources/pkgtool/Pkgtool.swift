import ArgumentParser
import Foundation
import PkgKit
import PkgKitArchive

/// The `pkgtool` command: builds, checks and installs hosted In-App Purchase content packages.
@main
struct Pkgtool: AsyncParsableCommand {
    /// The version lives in PkgKit, in one place.
    static let version = PkgKitVersion.current

    // No `version:` here: the parser would then take `--version` on every command too (and
    // print the version for `create --version 1.0`); the root's own flag below takes it alone.
    static let configuration = CommandConfiguration(
        commandName: "pkgtool",
        abstract: "Build, check and install hosted In-App Purchase content packages (.pkg).",
        discussion: """
        A content package holds ContentInfo.plist (ContentVersion, IAPProductIdentifier) and a \
        Contents/ folder. --json and --quiet go before or after the command name. Exit status: \
        0 success, 1 invalid package or refused operation, 2 input unreadable or I/O error, \
        3 updates available (sync --check only), 64 wrong usage, 130 / 143 interrupted (SIGINT / \
        SIGTERM). 'pkgtool explain CODE' says what a diagnostic code means and how to fix it.
        """,
        subcommands: [Create.self, Validate.self, Extract.self, Inspect.self, Diff.self, Publish.self, Sync.self, Keygen.self, Convert.self,
                      Explain.self]
    )

    /// `--json` and `--quiet` given before the command name.
    @OptionGroup var outputOptions: OutputOptions

    @Flag(help: "Print pkgtool's version. Only alone: with a command or other flags it is a usage error.")
    var version = false

    static func main() async {
        MemoryPolicy.apply()
        // zip, tar, flat installer packages and the zip writer come from libarchive.
        LibArchiveSupport.register()
        let arguments = Array(CommandLine.arguments.dropFirst())
        // The parser judges the command line. Only a line it refuses gets advice it cannot give
        // (the nearest command or option), in place of its own words; and `--version` beside a
        // command, which the root's flag would otherwise take, is refused here.
        if let (problem, command) = CommandNames.misplacedVersion(in: arguments) {
            Console.err(UsageError.text(problem, for: command))
            Foundation.exit(ExitStatus.usage.code)
        }
        if (try? parseAsRoot(arguments)) == nil {
            if let problem = CommandNames.unknownCommand(in: arguments) {
                Console.err(problem)
                Foundation.exit(ExitStatus.usage.code)
            }
            if let (problem, command) = OptionSuggestion.problem(in: arguments) {
                Console.err(UsageError.text(problem, for: command))
                Foundation.exit(ExitStatus.usage.code)
            }
        }
        await main(arguments)
    }

    /// `pkgtool --version` prints the version; bare `pkgtool` is a usage error: the help goes to
    /// stderr and the exit status is 64.
    func run() async throws {
        if version {
            Console.out(Self.version)
            return
        }
        Console.err(Self.helpMessage())
        throw ExitCode.validationFailure
    }
}

/// The command names, and the nearest one to a misspelt command.
enum CommandNames {
    /// Every command a first argument may name.
    static var all: [String] {
        Pkgtool.configuration.subcommands.map { $0.commandLineName } + ["help"]
    }

    /// What to say when the command `arguments` name does not exist, or nil when it does (or
    /// the arguments are the parser's to judge). Only `--json` and `--quiet` may come first.
    static func unknownCommand(in arguments: [String]) -> String? {
        guard let name = arguments.first(where: { !$0.hasPrefix("-") }),
              arguments.prefix(while: { $0.hasPrefix("-") }).allSatisfy({ ["--json", "--quiet"].contains($0) }),
              !all.contains(name) else { return nil }
        let commands = Pkgtool.configuration.subcommands.map { $0.commandLineName }
        var message = "Error: '\(name)' is not a pkgtool command."
        if let nearest = NearestName.suggestion(for: name, among: commands) { message += " Did you mean '\(nearest)'?" }
        return message + "\nCommands: \(commands.joined(separator: ", ")). See 'pkgtool --help'."
    }

    /// What to say, and about which command, when `--version` is given with anything else: only
    /// `pkgtool --version` alone prints the version, so that `create --version 1.0` (meaning
    /// `--content-version`) fails loudly instead of printing a version and creating nothing.
    static func misplacedVersion(in arguments: [String]) -> (message: String, command: ParsableCommand.Type)? {
        let options = arguments.prefix { $0 != "--" }
        guard arguments != ["--version"], options.contains(where: { $0 == "--version" || $0.hasPrefix("--version=") }) else { return nil }
        let name = options.first { !$0.hasPrefix("-") }
        guard let command = Pkgtool.configuration.subcommands.first(where: { $0.commandLineName == name }) else {
            return ("--version goes alone: 'pkgtool --version' prints the version", Pkgtool.self)
        }
        if command == Pkgtool.Create.self {
            return ("create has no --version: the package's ContentVersion is --content-version (e.g. --content-version 1.0)", command)
        }
        return ("\(command.commandLineName) has no --version: 'pkgtool --version', alone, prints pkgtool's version", command)
    }
}

extension ParsableCommand {
    /// The name a command line gives this command: its configuration's (every pkgtool command
    /// names itself, so no name is left to the parser's derivation from the type's).
    static var commandLineName: String {
        guard let name = configuration.commandName else { preconditionFailure("\(self) does not name itself") }
        return name
    }
}
