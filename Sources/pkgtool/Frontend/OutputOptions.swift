import ArgumentParser
import PkgKit

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

/// `--max-size`, shared by the commands that enforce the size rule.
struct LimitOptions: ParsableArguments {
    @Option(name: .customLong("max-size"), help: ArgumentHelp("Size limit for the package file and for the unpacked payload, in bytes.", valueName: "BYTES"))
    var maxSize: Int64 = PackageLimits.defaultMaxSize

    func validate() throws {
        guard maxSize > 0 else { throw ValidationError("--max-size must be a positive number of bytes") }
    }

    var limits: PackageLimits { PackageLimits(maxSize: maxSize) }
}

extension ContentVersion.Part: ExpressibleByArgument {}
extension CompressionMode: ExpressibleByArgument {}
extension OutputFormat: ExpressibleByArgument {}
