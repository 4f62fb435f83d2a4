
/// A reader whose first entry (or first failure) was already taken to look at, handed back
/// before the rest: what lets `PackageOpener` tell package kinds apart in a single pass.
final class PeekedReader: PackageReader, ReadAheadReader {
    private let inner: PackageReader
    private var first: ArchiveEntry?
    private var failure: ReadError?

    package init(_ inner: PackageReader, first: ArchiveEntry) {
        self.inner = inner
        self.first = first
    }

    package init(_ inner: PackageReader, failure: ReadError) {
        self.inner = inner
        self.failure = failure
    }

    package var format: PackageFormat { inner.format }
    package var progress: (done: Int64, total: Int64) { inner.progress }
    package var expectedEntryCount: Int? { inner.expectedEntryCount }
    package var declaredSHA1: String? { inner.declaredSHA1 }

    package func nextEntry() throws -> ArchiveEntry? {
        if let failure {
            self.failure = nil
            throw failure
        }
        if let first {
            self.first = nil
            return first
        }
        return try inner.nextEntry()
    }

    package func readData(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        try inner.readData(into: buffer)
    }

    package func startReadAhead(_ plan: ReadAheadPlan) -> Bool {
        (inner as? ReadAheadReader)?.startReadAhead(plan) ?? false
    }

    package func verifyData(head: UnsafeMutableRawBufferPointer) throws -> VerifiedData {
        if let inner = inner as? ReadAheadReader { return try inner.verifyData(head: head) }
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 << 10, alignment: 16)
        defer { scratch.deallocate() }
        return try verifyByReading(head: head, scratch: scratch)
    }
}
