import ArgumentParser
import PkgKit

/// `--json` and `--quiet`, shared by every subcommand.
struct OutputOptions: ParsableArguments {
    @Flag(help: "Print one JSON document on stdout and nothing else there.")
    var json = false

    @Flag(help: "Print only errors.")
    var quiet = false
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
