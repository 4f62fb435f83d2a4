import ArgumentParser

/// A usage error found after parsing (exit 64): said as the argument parser says its own, with
/// the command's usage and the same pointer to its help, so that every usage error reads alike.
struct UsageError: Error {
    /// What is wrong with the command line.
    var message: String

    /// The parser's three lines for `message` about `command`: the error, the usage, and where
    /// the help is.
    static func text(_ message: String, for command: ParsableCommand.Type) -> String {
        let names = command == Pkgtool.self ? "pkgtool" : "pkgtool \(command.commandLineName)"
        return """
            Error: \(message)
            Usage: \(Pkgtool.usageString(for: command))
              See '\(names) --help' for more information.
            """
    }
}
