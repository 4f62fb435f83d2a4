import PkgKitFormat

/// The package a delta update installs from: the sparse local copy that holds its header, TOC and
/// the heap ranges that were fetched, read by pkgtool's own xar reader with the data of the reused
/// files withheld (the installer takes those from the installed version, or from the files rebuilt
/// from chunks: `InstallOptions.reused`).
extension PackageSource {
    /// The sparse copy at `path`, shown as `shown` and named `name` in reports. `reusedEntries`
    /// are the reused files by their index in the TOC: their heap ranges are never read, not even
    /// by the reader's read-ahead. `memo` holds the TOC as the plan parsed it, when it did.
    package static func delta(_ path: String, shownAs shown: String, name: String, reusedEntries: Set<Int>,
                              memo: XarTableMemo? = nil) -> PackageSource {
        var source = PackageSource(path: shown) { limits, memo in
            switch try XarReader.open(PackageFile(path: path), path: path, limits: limits,
                                      dataWanted: { !reusedEntries.contains($0) }, memo: memo) {
            case .reader(let reader):
                var facts = PackageFacts()
                facts.archiveName = name
                facts.archiveBytes = reader.progress.total
                return PackageOpener.Opened(reader: reader, facts: facts)
            case .needsArchiveSupport:
                // libarchive would read every byte, and most of the heap is not there.
                throw ReadError.unreadable(path: nil, "the package's table of contents is not one pkgtool reads itself: download it whole")
            }
        }
        source.memo = memo
        return source
    }
}
