/// Reads a package assembled from a partial download and installed files: a `XarReader` over a
/// sparse local copy whose heap holds only the fetched ranges, with every reused file handed on as
/// such (its bytes come from the installed version; see `ReusedFile`) and its heap range, never
/// downloaded, never read.
final class DeltaReader: PackageReader {
    private let inner: any PackageReader
    private let reused: [ArchivePath: ReusedFile]
    private var skipping = false

    init(_ inner: any PackageReader, reused: [ArchivePath: ReusedFile]) {
        self.inner = inner
        self.reused = reused
    }

    var format: PackageFormat { inner.format }
    var progress: (done: Int64, total: Int64) { inner.progress }
    var expectedEntryCount: Int? { inner.expectedEntryCount }
    var declaredSHA1: String? { skipping ? nil : inner.declaredSHA1 }

    func nextEntry() throws -> ArchiveEntry? {
        guard var entry = try inner.nextEntry() else { return nil }
        skipping = false
        if entry.kind == .file, let file = reused[entry.path] {
            entry.reused = file
            skipping = true
        }
        return entry
    }

    func readData(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        skipping ? 0 : try inner.readData(into: buffer)
    }
}
