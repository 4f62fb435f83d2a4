import ArgumentParser
import Foundation
import PkgKit
import PkgKitArchive

/// The `pkgtool` command: builds, checks and installs hosted In-App Purchase content packages.
@main
struct Pkgtool: AsyncParsableCommand {
    /// The version lives in PkgKit, in one place.
    static let version = PkgKitVersion.current

    static let configuration = CommandConfiguration(
        commandName: "pkgtool",
        abstract: "Build, check and install hosted In-App Purchase content packages (.pkg).",
        discussion: """
        A content package holds ContentInfo.plist (ContentVersion, IAPProductIdentifier) and a \
        Contents/ folder. --json and --quiet go before or after the command name. Exit status: \
        0 success, 1 invalid package or refused operation, 2 input unreadable or I/O error, \
        64 wrong usage.
        """,
        version: version,
        subcommands: [Create.self, Validate.self, Extract.self, Inspect.self, Diff.self, Publish.self, Sync.self, Keygen.self, Convert.self]
    )

    /// `--json` and `--quiet` given before the command name.
    @OptionGroup var outputOptions: OutputOptions

    static func main() async {
        MemoryPolicy.apply()
        // zip, tar, flat installer packages and the zip writer come from libarchive.
        LibArchiveSupport.register()
        let arguments = Array(CommandLine.arguments.dropFirst())
        if let problem = CommandNames.unknownCommand(in: arguments) {
            Console.err(problem)
            Foundation.exit(ExitCode.validationFailure.rawValue)
        }
        await main(arguments)
    }

    /// Bare `pkgtool` is a usage error: the help goes to stderr and the exit status is 64.
    func run() async throws {
        Console.err(Self.helpMessage())
        throw ExitCode.validationFailure
    }
}

/// The command names, and the nearest one to a misspelt command.
enum CommandNames {
    /// Every command a first argument may name.
    static var all: [String] {
        Pkgtool.configuration.subcommands.map { $0._commandName } + ["help"]
    }

    /// What to say when the command `arguments` name does not exist, or nil when it does (or
    /// the arguments are the parser's to judge). Only `--json` and `--quiet` may come first.
    static func unknownCommand(in arguments: [String]) -> String? {
        guard let name = arguments.first(where: { !$0.hasPrefix("-") }),
              arguments.prefix(while: { $0.hasPrefix("-") }).allSatisfy({ ["--json", "--quiet"].contains($0) }),
              !all.contains(name) else { return nil }
        let commands = Pkgtool.configuration.subcommands.map { $0._commandName }
        var message = "Error: '\(name)' is not a pkgtool command."
        if let nearest = NearestName.suggestion(for: name, among: commands) { message += " Did you mean '\(nearest)'?" }
        return message + "\nCommands: \(commands.joined(separator: ", ")). See 'pkgtool --help'."
    }
}
