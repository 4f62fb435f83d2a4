import ArgumentParser
import PkgKit

/// Usage problems in a command line the argument parser refused, said with advice the parser
/// cannot give: the nearest known option for an unknown one (whatever else is missing,
/// so the typo is what the user hears about first), the command's output option for a `-o` it
/// does not have, and the option a stray positional argument was meant for.
enum OptionSuggestion {
    /// What a command writes to, for advice: the option and, in words, what it names.
    struct Destination {
        var option: String
        var what: String
    }

    /// The destination of the command named `command`, when it takes a fixed number of
    /// positional arguments (so that one too many can be told apart) and writes somewhere.
    static func destination(of command: String) -> Destination? {
        switch command {
        case Pkgtool.Extract.commandLineName, Pkgtool.Sync.commandLineName: Destination(option: "--documents", what: "the Documents folder")
        case Pkgtool.Create.commandLineName: Destination(option: "-o", what: "the package to write")
        case Pkgtool.Keygen.commandLineName: Destination(option: "-o", what: "the key files' base name")
        default: nil
        }
    }

    /// Names every command accepts that the parser adds itself.
    private static let parserNames: Set<String> = ["-h", "--help", "--experimental-dump-help"]

    /// What to say about `arguments` (the command line after `pkgtool`), and about which
    /// command; nil when the parser is to judge them (it then finds nothing, or says it as well).
    static func problem(in arguments: [String]) -> (message: String, command: ParsableCommand.Type)? {
        guard let start = arguments.firstIndex(where: { !$0.hasPrefix("-") }),
              arguments[..<start].allSatisfy({ ["--json", "--quiet"].contains($0) }),
              let command = Pkgtool.configuration.subcommands.first(where: { $0.commandLineName == arguments[start] }),
              let known = CommandOptions.of(arguments[start]) else { return nil }
        let destination = destination(of: known.command)
        var positionals: [String] = []
        var given: Set<String> = []
        var index = start + 1
        while index < arguments.count {
            let token = arguments[index]
            index += 1
            if token == "--" {
                positionals += arguments[index...]
                break
            }
            guard token.count > 1, token.hasPrefix("-"), token.dropFirst().first.map({ $0.isLetter || $0 == "-" }) == true else {
                positionals.append(token)
                continue
            }
            let name = String(token.prefix { $0 != "=" })
            if parserNames.contains(name) { continue }
            guard let option = known.option(named: name) else {
                return (unknown(name, in: known, destination: destination), command)
            }
            given.formUnion(option.names)
            if option.takesValue, !token.contains("=") { index += 1 }
        }
        guard let limit = known.positionalLimit, positionals.count > limit,
              let destination, !given.contains(destination.option) else { return nil }
        let stray = positionals[limit]
        return ("unexpected argument \(stray); give \(destination.what) with \(destination.option) \(stray)", command)
    }

    /// The parser's words for an unknown option, with the nearest known one: the command's
    /// destination for a short option (`-o` where there is no `-o`), else the long name
    /// closest in spelling.
    private static func unknown(_ name: String, in known: CommandOptions, destination: Destination?) -> String {
        let nearest = name.hasPrefix("--")
            ? NearestName.suggestion(for: name, among: known.longNames)
            : (name == "-o" ? destination?.option : nil)
        return "Unknown option '\(name)'" + (nearest.map { ". Did you mean '\($0)'?" } ?? "")
    }
}
