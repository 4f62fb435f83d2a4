import ArgumentParser
import PkgKit

/// `--max-size`, shared by the commands that enforce the size rule.
struct LimitOptions: ParsableArguments {
    @Option(name: .customLong("max-size"),
            help: ArgumentHelp("Size limit for the package file and for the unpacked payload: bytes, or a number with K, M, G, KiB, MiB, GiB (powers of 1024) or KB, MB, GB (powers of 1000).", valueName: "BYTES"),
            transform: ByteCount.parse)
    var maxSize: Int64 = PackageLimits.defaultMaxSize

    func validate() throws {
        guard maxSize > 0 else { throw ValidationError("--max-size must be a positive number of bytes; \(ByteCount.forms)") }
    }

    /// The limits the flag sets.
    var limits: PackageLimits { PackageLimits(maxSize: maxSize) }
}
