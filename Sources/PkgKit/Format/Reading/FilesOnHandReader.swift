import PkgKitSupport

/// Reads a xar some of whose files are on hand outside it (see `FilesOnHand`): pkgtool's own
/// xar reader, with every such file handed on as such (`ArchiveEntry.onHand`), its stored bytes
/// never read. The package's bytes need be there only where the other files' data is (the rest
/// may be holes): nothing else of the heap is read.
package final class FilesOnHandReader: PackageReader {
    private let inner: any PackageReader
    private let onHand: any FilesOnHand
    private var skipping = false

    private init(_ inner: any PackageReader, onHand: any FilesOnHand) {
        self.inner = inner
        self.onHand = onHand
    }

    /// Opens the xar in `bytes` (named `path` in messages, `name` in reports) with the files of
    /// `onHand` not read. A xar only `ArchiveSupport` reads throws `PackageOpener.NeedsWholeFile`:
    /// libarchive would read every byte of it.
    package static func open(_ bytes: PackageBytes, path: String, name: String, onHand: any FilesOnHand, limits: PackageLimits,
                     memo: XarTableMemo?) throws -> PackageOpener.Opened {
        switch try XarReader.open(bytes, path: path, limits: limits, dataWanted: { !onHand.holdsEntry($0) }, memo: memo) {
        case .reader(let reader):
            var facts = PackageFacts()
            facts.archiveName = name
            facts.archiveBytes = reader.progress.total
            return PackageOpener.Opened(reader: FilesOnHandReader(reader, onHand: onHand), facts: facts)
        case .needsArchiveSupport(let reason):
            throw PackageOpener.NeedsWholeFile(reason: reason)
        }
    }

    package var format: PackageFormat { inner.format }
    package var progress: (done: Int64, total: Int64) { inner.progress }
    package var expectedEntryCount: Int? { inner.expectedEntryCount }
    package var declaredSHA1: String? { skipping ? nil : inner.declaredSHA1 }

    package func nextEntry() throws -> ArchiveEntry? {
        guard var entry = try inner.nextEntry() else { return nil }
        skipping = false
        if entry.kind == .file, let file = onHand.file(at: entry.path) {
            entry.onHand = file
            skipping = true
        }
        return entry
    }

    package func readData(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        skipping ? 0 : try inner.readData(into: buffer)
    }
}
