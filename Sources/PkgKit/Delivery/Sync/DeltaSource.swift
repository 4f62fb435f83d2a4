import PkgKitSupport
import PkgKitFormat
import PkgKitChecking
import PkgKitReports
import PkgKitInstall
import PkgKitCatalog
import PkgKitTransport

/// The package a delta update installs from: the sparse local copy that holds its header, TOC and
/// the heap ranges that were fetched, read by pkgtool's own xar reader, with the reused files
/// taken from the installed version (or rebuilt from chunks) instead of their never-fetched data.
extension PackageSource {
    /// The sparse copy at `path`, shown as `shown` and named `name` in reports, with `reused`
    /// files (by their path in the package) standing in for their data. `reusedEntries` are the
    /// same files by their index in the TOC: their heap ranges are not read, even by the reader's
    /// read-ahead. `memo` holds the TOC as the plan parsed it, when it did.
    package static func delta(_ path: String, shownAs shown: String, name: String, reused: [ArchivePath: InstalledFile],
                      reusedEntries: Set<Int>, memo: XarTableMemo? = nil) -> PackageSource {
        let onHand = ReusedFiles(byPath: reused, entries: reusedEntries)
        var source = PackageSource(path: shown) { limits, memo in
            do {
                return try FilesOnHandReader.open(PackageFile(path: path), path: path, name: name, onHand: onHand, limits: limits, memo: memo)
            } catch is PackageOpener.NeedsWholeFile {
                throw ReadError.unreadable(path: nil, "the package's table of contents is not one pkgtool reads itself: download it whole")
            }
        }
        source.memo = memo
        return source
    }
}

/// The installed files a delta update reuses, as the reader of its sparse copy asks for them.
private struct ReusedFiles: FilesOnHand {
    var byPath: [ArchivePath: InstalledFile]
    var entries: Set<Int>

    func file(at path: ArchivePath) -> (any FileOnHand)? { byPath[path] }
    func holdsEntry(_ index: Int) -> Bool { entries.contains(index) }
}
