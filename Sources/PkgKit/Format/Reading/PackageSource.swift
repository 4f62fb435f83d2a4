
/// Where a package is read from, once per pass: a file or folder on disk, bytes still arriving, or
/// whatever a layer above opens (a xar some of whose files' data it asks `XarReader` to withhold).
package struct PackageSource: Sendable {
    /// The package's path (or URL), for reports and messages.
    package var path: String
    /// Opens a fresh reader over the whole package, with the memo when there is one.
    private let opener: @Sendable (PackageLimits, XarTableMemo?) throws -> PackageOpener.Opened
    /// Set for a source read more than once in a row (an install's first look and full pass): a
    /// pass hands the xar table of contents it read to the next one, which takes it if the file
    /// has not changed.
    package var memo: XarTableMemo?

    package init(path: String, open: @escaping @Sendable (PackageLimits, XarTableMemo?) throws -> PackageOpener.Opened) {
        self.path = path
        opener = open
    }

    /// Opens a fresh reader over the whole package.
    package func open(_ limits: PackageLimits) throws -> PackageOpener.Opened { try opener(limits, memo) }

    /// A package file or unpacked folder, opened by `PackageOpener`. `name`, when given, is the
    /// package's file name as published (a file still arriving may have a name of its own).
    package static func file(_ path: String, shownAs shown: String? = nil, name: String? = nil) -> PackageSource {
        PackageSource(path: shown ?? path) { limits, memo in
            var opened = try PackageOpener.open(path, limits: limits, memo: memo)
            if let name { opened.facts.archiveName = name }
            return opened
        }
    }

    /// A package still arriving (`bytes`: a transfer in progress, its reads waiting for the bytes),
    /// shown as `shown` and named `name` in reports. It opens as a file would; a container only
    /// libarchive reads throws `PackageOpener.NeedsWholeFile`, to be opened again once it is whole.
    package static func arriving(_ bytes: PackageBytes, shownAs shown: String, name: String) -> PackageSource {
        PackageSource(path: shown) { limits, memo in
            try PackageOpener.open(bytes, path: shown, name: name, limits: limits, memo: memo, whole: false)
        }
    }
}
