/// Where a package is read from, once per pass: a file or folder on disk, or (for a delta update)
/// a partial download completed by files already installed.
struct PackageSource: Sendable {
    /// The package's path (or URL), for reports and messages.
    var path: String
    /// Opens a fresh reader over the whole package, with the memo when there is one.
    private let opener: @Sendable (PackageLimits, XarTableMemo?) throws -> PackageOpener.Opened
    /// Set for a source read more than once in a row (an install's first look and full pass): a
    /// pass hands the xar table of contents it read to the next one, which takes it if the file
    /// has not changed.
    var memo: XarTableMemo?

    init(path: String, open: @escaping @Sendable (PackageLimits, XarTableMemo?) throws -> PackageOpener.Opened) {
        self.path = path
        opener = open
    }

    /// Opens a fresh reader over the whole package.
    func open(_ limits: PackageLimits) throws -> PackageOpener.Opened { try opener(limits, memo) }

    /// A package file or unpacked folder, opened by `PackageOpener`. `name`, when given, is the
    /// package's file name as published (a download in progress has a name of its own).
    static func file(_ path: String, shownAs shown: String? = nil, name: String? = nil) -> PackageSource {
        PackageSource(path: shown ?? path) { limits, memo in
            var opened = try PackageOpener.open(path, limits: limits, memo: memo)
            if let name { opened.facts.archiveName = name }
            return opened
        }
    }

    /// A package still arriving (`bytes`: a download in progress, its reads waiting for the bytes),
    /// shown as `shown` and named `name` in reports. It opens as a file would; a container only
    /// libarchive reads throws `PackageOpener.NeedsWholeFile`, to be installed once it is whole.
    static func arriving(_ bytes: PackageBytes, shownAs shown: String, name: String) -> PackageSource {
        PackageSource(path: shown) { limits, memo in
            try PackageOpener.open(bytes, path: shown, name: name, limits: limits, memo: memo, whole: false)
        }
    }

    /// A delta update's package: the sparse local copy at `path` (header, TOC and the fetched heap
    /// ranges), read by pkgtool's own xar reader, with `reused` files taken from the installed version.
    /// `reusedEntries` are the same files by their index in the TOC: their (never downloaded) heap
    /// ranges are not read, even by the reader's read-ahead. `memo` holds the TOC as the plan
    /// parsed it, when it did.
    static func delta(_ path: String, shownAs shown: String, name: String, reused: [ArchivePath: ReusedFile],
                      reusedEntries: Set<Int>, memo: XarTableMemo? = nil) -> PackageSource {
        var source = PackageSource(path: shown) { limits, memo in
            guard case .reader(let reader) = try XarReader.open(path: path, limits: limits, dataWanted: { !reusedEntries.contains($0) },
                                                                memo: memo) else {
                throw ReadError.unreadable(path: nil, "the package's table of contents is not one pkgtool reads itself: download it whole")
            }
            var facts = PackageFacts()
            facts.archiveName = name
            facts.archiveBytes = reader.progress.total
            return PackageOpener.Opened(reader: DeltaReader(reader, reused: reused), facts: facts)
        }
        source.memo = memo
        return source
    }
}
