import ArgumentParser

/// `--keep N`, the one form of the flag for every command that prunes versions afterwards
/// (extract and sync keep the current version plus the newest N − 1 others; publish, whose
/// current version is the newest, the newest N). Use it as `@OptionGroup var keep: KeepOptions`
/// and pass `keep.count` on.
struct KeepOptions: ParsableArguments {
    @Option(name: .customLong("keep"),
            help: ArgumentHelp("Afterwards keep N versions: the current one and the newest N − 1 others; remove the rest (N ≥ 1). Default: keep all.", valueName: "N"))
    var count: Int?

    func validate() throws {
        if let count, count < 1 { throw ValidationError("--keep must be at least 1") }
    }
}
