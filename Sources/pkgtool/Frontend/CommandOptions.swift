import ArgumentParser
import Foundation

/// The options and arguments a command declares, as the argument parser describes them (the
/// same description the man page and the shell completions are made from), so that advice
/// about a command line names only what the command has.
struct CommandOptions: Sendable {
    /// One option or flag: every name it answers to, spelt as typed (`-o`, `--output`).
    struct Option: Sendable {
        var names: [String]
        /// True for an option that takes a value (`--documents DIR`), false for a flag.
        var takesValue: Bool
    }

    /// The command's name.
    let command: String
    /// Its options and flags, `--help` included.
    let options: [Option]
    /// How many positional arguments it takes at most (nil: any number).
    let positionalLimit: Int?

    /// True when the command answers to `name` (`-o`, `--max-size`).
    func has(_ name: String) -> Bool {
        option(named: name) != nil
    }

    /// The option that answers to `name`.
    func option(named name: String) -> Option? {
        options.first { $0.names.contains(name) }
    }

    /// Every long name, for suggestions.
    var longNames: [String] {
        options.flatMap(\.names).filter { $0.hasPrefix("--") }
    }

    /// The description of the command named `name`, or nil when there is no such command.
    static func of(_ name: String) -> CommandOptions? {
        all.first { $0.command == name }
    }

    /// Every command's, read once from the parser's own description.
    static let all: [CommandOptions] = {
        guard let tool = try? JSONDecoder().decode(Tool.self, from: Data(Pkgtool._dumpHelp().utf8)) else { return [] }
        return (tool.command.subcommands ?? []).map { command in
            let arguments = command.arguments ?? []
            let options = arguments.filter { $0.kind != "positional" }.map { argument in
                Option(names: (argument.names ?? []).map { ($0.kind == "short" ? "-" : "--") + $0.name },
                       takesValue: argument.kind == "option")
            }
            let positionals = arguments.filter { $0.kind == "positional" }
            return CommandOptions(command: command.commandName, options: options,
                                  positionalLimit: positionals.contains(where: \.isRepeating) ? nil : positionals.count)
        }
    }()

    // The parts of the parser's description (`--experimental-dump-help`) read here.
    private struct Tool: Decodable {
        var command: Command
    }

    private struct Command: Decodable {
        var commandName: String
        var subcommands: [Command]?
        var arguments: [Argument]?
    }

    private struct Argument: Decodable {
        var kind: String
        var isRepeating: Bool
        var names: [Name]?
    }

    private struct Name: Decodable {
        var kind: String
        var name: String
    }
}
