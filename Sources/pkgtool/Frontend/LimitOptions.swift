import ArgumentParser
import PkgKit

/// `--max-size`, shared by the commands that enforce the size rule.
struct LimitOptions: ParsableArguments {
    @Option(name: .customLong("max-size"), help: ArgumentHelp("Size limit for the package file and for the unpacked payload, in bytes.", valueName: "BYTES"))
    var maxSize: Int64 = PackageLimits.defaultMaxSize

    func validate() throws {
        guard maxSize > 0 else { throw ValidationError("--max-size must be a positive number of bytes") }
    }

    /// The limits the flag sets.
    var limits: PackageLimits { PackageLimits(maxSize: maxSize) }
}
