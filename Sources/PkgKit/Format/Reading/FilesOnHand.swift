import PkgKitSupport

/// Which files of a package are on hand outside it (see `FileOnHand`), asked by the reader that
/// then need not read them: `FilesOnHandReader`.
package protocol FilesOnHand: Sendable {
    /// The file on hand for the entry at `path`, if any.
    func file(at path: ArchivePath) -> (any FileOnHand)?
    /// Whether the entry at `index` of a xar's table of contents (in document order) is one of
    /// those files: its stored bytes are then never read, not even ahead. The reader asks this
    /// before it has built any entry's path.
    func holdsEntry(_ index: Int) -> Bool
}
