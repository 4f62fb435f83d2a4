import PkgKitSupport

/// Turns one xar entry's heap bytes into its data: read, inflate, and a check of the sizes and
/// both TOC digests. The reader uses one on its own thread, and each read-ahead worker has its own.
///
/// Two ways: `decodeWhole` inflates an entry in one call when its sizes are small enough to hold;
/// `start` and `read` stream any entry in chunks through the fastest `StreamInflater` linked.
/// Whenever the one-call way meets anything unexpected it gives up, and streaming the entry again
/// reports exactly what is wrong; whenever a stream inflater other than zlib's does, zlib streams
/// the entry again to say what, so the words are zlib's whichever way was tried first.
final class XarEntryDecoder {
    package let table: XarEntryTable
    private let bytes: PackageBytes
    private let path: String
    private let heapStart: Int64

    // The entry being streamed.
    private var index = -1
    private var reading = false
    package private(set) var position: Int64 = 0
    private var remaining: Int64 = 0
    private var produced: Int64 = 0
    private var archivedDigest: XarDigest?
    private var extractedDigest: XarDigest?
    private var hashedOnce = false
    /// The inflater streaming the current entry, and whether its stream has ended.
    private var inflater: StreamInflater
    private var inflaterEnded = false
    /// The fastest inflater linked, which streams every entry first.
    private let fastest: StreamInflater
    /// zlib's, made when an entry needs telling what is wrong with it in zlib's words.
    private var zlib: Inflater?
    private let input: UnsafeMutableRawBufferPointer
    private let whole = WholeBufferInflater()

    package static let inputSize = 1 << 20
    /// The largest entry (unpacked, and stored) decoded in one call.
    static let wholeLimit: Int64 = DeflateProfile.wholeBufferLimit

    /// A decoder of `table`'s entries, whose heap starts at `heapStart` in `bytes`; `path` names
    /// the package in messages.
    package init(table: XarEntryTable, bytes: PackageBytes, path: String, heapStart: Int64) {
        self.table = table
        self.bytes = bytes
        self.path = path
        self.heapStart = heapStart
        fastest = makeStreamInflater()
        inflater = fastest
        input = .allocate(byteCount: Self.inputSize, alignment: 16)
    }

    deinit { input.deallocate() }

    /// The entry's path for messages, made only when one is needed.
    func displayPath(_ index: Int) -> String {
        ArchivePath(raw: table.path(at: index, limit: 4 * PackageLimits.maxPathBytes) ?? []).description
    }

    /// Whether `decodeWhole` may try the entry.
    func fitsWhole(_ record: XarEntryTable.Record) -> Bool {
        record.gzip && record.hasData && record.size >= 0 && record.size <= Self.wholeLimit
            && record.length > 0 && record.length <= Self.wholeLimit + (64 << 10)
    }

    /// What `decodeWhole` did.
    enum WholeDecoding {
        /// The data is in the output, inflated cleanly; a digest mismatch if one digest differs.
        case decoded(mismatch: ReadError?)
        /// Stream the entry instead: streaming says what is wrong, if anything.
        case streamInstead
    }

    /// Decodes entry `index` into `output` (exactly its declared size) in one call and checks
    /// both digests.
    func decodeWhole(_ index: Int, into output: UnsafeMutableRawBufferPointer) -> WholeDecoding {
        let record = table.records[index]
        guard fitsWhole(record), output.count == Int(record.size), let start = heapPosition(record),
              record.length <= bytes.size - start else { return .streamInstead }
        let length = Int(record.length)
        // Compressed data larger than `input` gets a buffer of its own for this call only: kept
        // between calls, it would hold 4 MiB per worker through the rest of the package (the peak
        // of an install comes at its end, among large stored files).
        let own: UnsafeMutableRawBufferPointer? = length > input.count ? .allocate(byteCount: length, alignment: 16) : nil
        defer { own?.deallocate() }
        let stored = UnsafeMutableRawBufferPointer(rebasing: (own ?? input)[0..<length])
        // A read that fails is streamed again, which reports it.
        guard (try? bytes.readChecked(into: stored, at: start)) == length,
              whole.inflate(UnsafeRawBufferPointer(stored), into: output) else { return .streamInstead }
        if var digest = record.archivedStyle.makeDigest() {
            digest.update(UnsafeRawBufferPointer(stored))
            let value = digest.finalize()
            if !value.elementsEqual(table.archivedDigest(record)) { return .decoded(mismatch: archivedMismatch(index, record, value)) }
        }
        if var digest = record.extractedStyle.makeDigest() {
            digest.update(UnsafeRawBufferPointer(output))
            let value = digest.finalize()
            if !value.elementsEqual(table.extractedDigest(record)) { return .decoded(mismatch: extractedMismatch(index, record, value)) }
        }
        return .decoded(mismatch: nil)
    }

    /// Where a record's stored bytes start in the package, or nil when its offset is negative or
    /// lies past the package's end.
    private func heapPosition(_ record: XarEntryTable.Record) -> Int64? {
        guard record.offset >= 0, case let (start, overflow) = heapStart.addingReportingOverflow(record.offset), !overflow,
              start <= bytes.size else { return nil }
        return start
    }

    /// Starts streaming entry `index` (a file).
    package func start(_ index: Int) throws {
        try start(index, through: fastest)
    }

    private func start(_ index: Int, through inflater: StreamInflater) throws {
        let record = table.records[index]
        self.index = index
        produced = 0
        guard record.hasData else {
            remaining = 0
            reading = false
            return
        }
        guard let start = heapPosition(record), record.length >= 0, record.length <= bytes.size - start || record.gzip else {
            throw ReadError.unreadable(path: displayPath(index), "the data lies outside the package (truncated or corrupt)")
        }
        position = start
        remaining = record.length
        archivedDigest = record.archivedStyle.makeDigest()
        // Stored data hashed once when both digests say the same thing.
        hashedOnce = !record.gzip && record.archivedStyle == record.extractedStyle
            && table.archivedDigest(record).elementsEqual(table.extractedDigest(record))
        extractedDigest = hashedOnce ? nil : record.extractedStyle.makeDigest()
        if record.gzip && record.length > 0 {
            self.inflater = inflater
            inflater.reset()
            inflaterEnded = false
        }
        reading = true
    }

    /// Stops streaming the current entry (its data is not wanted after all).
    package func stop() { reading = false }

    /// The next bytes of the entry being streamed; 0 at its end, once sizes and digests are checked.
    package func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard reading else { return 0 }
        let record = table.records[index]
        do {
            let count = record.gzip && record.length > 0 ? try inflateSome(into: buffer) : try copySome(into: buffer)
            if count == 0 {
                reading = false
                try check(record)
                return 0
            }
            extractedDigest?.update(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            produced += Int64(count)
            if record.size >= 0, produced > record.size {
                throw ReadError.unreadable(path: displayPath(index), "the data is longer than the \(record.size) bytes its header declares")
            }
            return count
        } catch {
            reading = false
            throw error
        }
    }

    private func copySome(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let count = Int(min(Int64(buffer.count), remaining))
        guard count > 0 else { return 0 }
        let target = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count])
        guard try bytes.read(into: target, at: position, path: path) == count else { throw truncated() }
        archivedDigest?.update(UnsafeRawBufferPointer(target))
        position += Int64(count)
        remaining -= Int64(count)
        return count
    }

    /// Reads the next stored bytes of the entry into `input` (hashing them); how many.
    private func refill() throws -> Int {
        // Compressed data may run past the end of the file: what is there is inflated,
        // so that a stream ending early (merged copies) is told from a cut-off file.
        let wanted = Int(min(Int64(input.count), remaining))
        let count = try bytes.read(into: UnsafeMutableRawBufferPointer(rebasing: input[0..<wanted]), at: position, path: path)
        guard count > 0 else { throw truncated() }
        archivedDigest?.update(UnsafeRawBufferPointer(rebasing: input[0..<count]))
        position += Int64(count)
        remaining -= Int64(count)
        return count
    }

    /// What can be wrong with a compressed stream.
    private enum StreamProblem {
        case corrupt(String)
        case endedEarly
        case truncated
    }

    /// The next inflated bytes of the entry. Only a clean end (the whole stored length used, the
    /// trailer right) ends it; anything else is a `StreamProblem`.
    private func inflateSome(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        if inflaterEnded { return 0 }
        while true {
            if inflater.pendingInput == 0 && remaining > 0 {
                inflater.supply(UnsafeRawBufferPointer(rebasing: input[0..<(try refill())]))
            }
            let (count, status) = inflater.inflate(into: buffer)
            switch status {
            case .more:
                if count > 0 { return count }
            case .ended:
                guard inflater.pendingInput == 0 && remaining == 0 else { throw try failure(.endedEarly) }
                inflaterEnded = true
                return count
            case .needsInput:
                if count > 0 { return count }
                if inflater.pendingInput == 0 && remaining == 0 { throw try failure(.truncated) }
            case .corrupt(let message):
                throw try failure(.corrupt(message))
            }
        }
    }

    /// The error for a stream that did not end cleanly: zlib's inflater names the problem; after
    /// any other, zlib streams the entry again from its start, its output dropped, to say it in
    /// zlib's words.
    private func failure(_ problem: StreamProblem) throws -> ReadError {
        guard inflater is Inflater else { return try diagnosis() }
        switch problem {
        case .corrupt(let message):
            return .unreadable(path: displayPath(index), "the compressed data is corrupt (zlib: \(message)): rebuild the package")
        case .endedEarly:
            return endedEarly()
        case .truncated:
            return .unreadable(path: displayPath(index), "the compressed data is truncated: the package is corrupt; rebuild it")
        }
    }

    private func diagnosis() throws -> ReadError {
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 << 10, alignment: 16)
        defer { scratch.deallocate() }
        let zlib = self.zlib ?? Inflater()
        self.zlib = zlib
        try start(index, through: zlib)
        do {
            while try read(into: scratch) > 0 {}
        } catch let error as ReadError {
            return error
        }
        // Two inflaters disagreeing would be a bug in one of them: the data is not trusted.
        return .unreadable(path: displayPath(index), "the compressed data could not be inflated (ISA-L and zlib disagree): rebuild the package")
    }

    /// After the last byte: sizes and both digests.
    private func check(_ record: XarEntryTable.Record) throws {
        if record.size >= 0, produced != record.size {
            throw ReadError.unreadable(path: displayPath(index), "the data is \(produced) bytes, not the \(record.size) its header declares: the package is corrupt")
        }
        if let digest = archivedDigest?.finalize(), !digest.elementsEqual(table.archivedDigest(record)) {
            throw archivedMismatch(index, record, digest)
        }
        // Stored data hashed once was checked against both digests above: they are the same.
        if !hashedOnce, let extracted = extractedDigest?.finalize(), !extracted.elementsEqual(table.extractedDigest(record)) {
            throw extractedMismatch(index, record, extracted)
        }
    }

    private func archivedMismatch(_ index: Int, _ record: XarEntryTable.Record, _ digest: [UInt8]) -> ReadError {
        .checksumMismatch(path: displayPath(index), "checksum error (the stored data's \(record.archivedStyle) is \(digest.hexString), the table of contents says \(table.archivedDigest(record).hexString))")
    }

    private func extractedMismatch(_ index: Int, _ record: XarEntryTable.Record, _ digest: [UInt8]) -> ReadError {
        .checksumMismatch(path: displayPath(index), "checksum error (the data's \(record.extractedStyle) is \(digest.hexString), the table of contents says \(table.extractedDigest(record).hexString))")
    }

    /// The zlib stream ended with stored bytes left over: libarchive's writer merges a path given
    /// twice into one entry like this; anything else is corruption.
    private func endedEarly() -> ReadError {
        let record = table.records[index]
        let consumed = record.length - remaining - Int64(inflater.pendingInput)
        if let copies = XarMergedCopies.copies(declaredLength: record.length, firstStream: consumed) {
            return XarMergedCopies.failure(path: displayPath(index), copies: copies)
        }
        return .unreadable(path: displayPath(index), "the compressed data ends before its declared length: the package is corrupt; rebuild it")
    }

    private func truncated() -> ReadError {
        .unreadable(path: displayPath(index), "the package is truncated: this file's data is cut short")
    }
}
