import ArgumentParser

/// `--json` and `--quiet`: the root command's (before the command name) and each command's
/// (after it), merged by `ReportingCommand`.
struct OutputOptions: ParsableArguments {
    @Flag(help: "Print one JSON document on stdout and nothing else there, whatever the outcome.")
    var json = false

    @Flag(help: "Print only errors.")
    var quiet = false

    /// Either place counts.
    func merged(with other: OutputOptions) -> OutputOptions {
        var both = self
        both.json = json || other.json
        both.quiet = quiet || other.quiet
        return both
    }
}
