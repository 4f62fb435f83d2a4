import ArgumentParser

/// `--keep N`, the one form of the flag for every command that prunes versions afterwards.
/// Its help is true of each: extract and sync keep the current version plus the newest N − 1
/// others, and publish, whose current version is always the newest, the newest N. Use it as
/// `@OptionGroup var keep: KeepOptions` and pass `keep.count` on.
struct KeepOptions: ParsableArguments {
    @Option(name: .customLong("keep"),
            help: ArgumentHelp("Afterwards keep only the newest N versions of each product, the current one always among them; remove the rest (N ≥ 1). Default: keep all.", valueName: "N"))
    var count: Int?

    func validate() throws {
        if let count, count < 1 { throw ValidationError("--keep must be at least 1") }
    }
}
