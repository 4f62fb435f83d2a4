internal import CZlib
#if canImport(CIsal)
internal import CIsal
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Turns one xar entry's heap bytes into its data: `pread`, inflate, and a check of the sizes and
/// both TOC digests. The reader uses one on its own thread, and each read-ahead worker has its own.
///
/// Two ways: `decodeWhole` inflates an entry in one call (ISA-L or libdeflate where linked) when its
/// sizes are small enough to hold; `start` and `read` stream any entry in chunks, through ISA-L
/// where it is linked (over twice zlib's speed on large text), else zlib. Whenever the one-call
/// way meets anything unexpected it gives up, and streaming the entry again reports exactly what
/// is wrong; whenever ISA-L's stream does, zlib streams the entry again to say what, so the words
/// are zlib's whichever way was tried first.
final class XarEntryDecoder {
    let table: XarEntryTable
    private let descriptor: Int32
    private let path: String
    private let fileSize: Int64
    private let heapStart: Int64

    // The entry being streamed.
    private var index = -1
    private var reading = false
    private(set) var position: Int64 = 0
    private var remaining: Int64 = 0
    private var produced: Int64 = 0
    private var archivedDigest: XarDigest?
    private var extractedDigest: XarDigest?
    private var hashedOnce = false
    private var stream = z_stream()
    private var streamOpen = false
    private let input: UnsafeMutableRawBufferPointer
    private let whole = WholeBufferInflater()
    #if canImport(CIsal)
    /// ISA-L's streaming state (87 KB), and whether its stream has ended.
    private let isal: UnsafeMutablePointer<inflate_state>? = .allocate(capacity: 1)
    private var isalEnded = false
    #endif
    /// Set while zlib streams an entry again to say what ISA-L found wrong with it.
    private var diagnosing = false

    static let inputSize = 1 << 20
    /// The largest entry (unpacked, and stored) decoded in one call.
    static let wholeLimit: Int64 = 4 << 20

    init(table: XarEntryTable, descriptor: Int32, path: String, fileSize: Int64, heapStart: Int64) {
        self.table = table
        self.descriptor = descriptor
        self.path = path
        self.fileSize = fileSize
        self.heapStart = heapStart
        input = .allocate(byteCount: Self.inputSize, alignment: 16)
    }

    deinit {
        if streamOpen { inflateEnd(&stream) }
        input.deallocate()
        #if canImport(CIsal)
        isal?.deallocate()
        #endif
    }

    /// The entry's path for messages, made only when one is needed.
    func displayPath(_ index: Int) -> String {
        ArchivePath(raw: table.path(at: index, limit: 4 * PackageLimits.maxPathBytes) ?? []).description
    }

    /// Whether `decodeWhole` may try the entry.
    func fitsWhole(_ record: XarEntryTable.Record) -> Bool {
        record.gzip && record.hasData && record.size >= 0 && record.size <= Self.wholeLimit
            && record.length > 0 && record.length <= Self.wholeLimit + (64 << 10)
    }

    /// Decodes entry `index` into `output` (exactly its declared size) in one call and checks
    /// both digests. True when the data is right; false when it should be streamed instead
    /// (which then reports the problem). A digest mismatch on data that inflated cleanly throws.
    func decodeWhole(_ index: Int, into output: UnsafeMutableRawBufferPointer) throws -> Bool {
        let record = table.records[index]
        guard fitsWhole(record), output.count == Int(record.size), record.offset >= 0,
              case let (start, overflow) = heapStart.addingReportingOverflow(record.offset), !overflow,
              start <= fileSize, record.length <= fileSize - start else { return false }
        let length = Int(record.length)
        // Compressed data larger than `input` gets a buffer of its own for this call only: kept
        // between calls, it would hold 4 MiB per worker through the rest of the package (the peak
        // of an install comes at its end, among large stored files). Its page faults cost about a
        // third of those of the output block the entry gets anyway.
        let own: UnsafeMutableRawBufferPointer? = length > input.count ? .allocate(byteCount: length, alignment: 16) : nil
        defer { own?.deallocate() }
        let stored = UnsafeMutableRawBufferPointer(rebasing: (own ?? input)[0..<length])
        guard readFully(descriptor, stored, at: start) == length else { return false }
        guard whole.inflate(UnsafeRawBufferPointer(stored), into: output) else { return false }
        if var digest = record.archivedStyle.makeDigest() {
            digest.update(UnsafeRawBufferPointer(stored))
            let value = digest.finalize()
            if !value.elementsEqual(table.archivedDigest(record)) { throw archivedMismatch(index, record, value) }
        }
        if var digest = record.extractedStyle.makeDigest() {
            digest.update(UnsafeRawBufferPointer(output))
            let value = digest.finalize()
            if !value.elementsEqual(table.extractedDigest(record)) { throw extractedMismatch(index, record, value) }
        }
        return true
    }

    /// Starts streaming entry `index` (a file).
    func start(_ index: Int) throws {
        let record = table.records[index]
        self.index = index
        produced = 0
        guard record.hasData else {
            remaining = 0
            reading = false
            return
        }
        guard record.offset >= 0, record.length >= 0,
              case let (start, overflow) = heapStart.addingReportingOverflow(record.offset), !overflow,
              start <= fileSize, record.length <= fileSize - start || record.gzip else {
            throw ReadError.unreadable(path: displayPath(index), "the data lies outside the package (truncated or corrupt)")
        }
        position = start
        remaining = record.length
        archivedDigest = record.archivedStyle.makeDigest()
        // Stored data hashed once when both digests say the same thing.
        hashedOnce = !record.gzip && record.archivedStyle == record.extractedStyle
            && table.archivedDigest(record).elementsEqual(table.extractedDigest(record))
        extractedDigest = hashedOnce ? nil : record.extractedStyle.makeDigest()
        #if canImport(CIsal)
        if record.gzip && record.length > 0, !diagnosing, let isal {
            isal_inflate_init(isal)
            // ISA-L checks the stream's Adler-32 trailer itself in this mode.
            isal.pointee.crc_flag = UInt32(ISAL_ZLIB)
            isalEnded = false
            reading = true
            return
        }
        #endif
        if record.gzip && record.length > 0 {
            if streamOpen { inflateReset(&stream) } else {
                guard CZlib_inflateInit(&stream) == Z_OK else { throw ReadError.io(path: path, "zlib could not start") }
                streamOpen = true
            }
            stream.avail_in = 0
        }
        reading = true
    }

    /// Stops streaming the current entry (its data is not wanted after all).
    func stop() { reading = false }

    /// The next bytes of the entry being streamed; 0 at its end, once sizes and digests are checked.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
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
        guard try readAvailable(target, at: position) == count else { throw truncated() }
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
        let count = try readAvailable(UnsafeMutableRawBufferPointer(rebasing: input[0..<wanted]), at: position)
        guard count > 0 else { throw truncated() }
        archivedDigest?.update(UnsafeRawBufferPointer(rebasing: input[0..<count]))
        position += Int64(count)
        remaining -= Int64(count)
        return count
    }

    private func inflateSome(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        #if canImport(CIsal)
        if !diagnosing, let isal { return try isalInflateSome(isal, into: buffer) }
        #endif
        while true {
            if stream.avail_in == 0 && remaining > 0 {
                stream.next_in = input.baseAddress!.assumingMemoryBound(to: Bytef.self)
                stream.avail_in = uInt(try refill())
            }
            stream.next_out = buffer.baseAddress!.assumingMemoryBound(to: Bytef.self)
            stream.avail_out = uInt(min(buffer.count, Int(UInt32.max)))
            let status = inflate(&stream, Z_NO_FLUSH)
            let count = buffer.count - Int(stream.avail_out)
            switch status {
            case Z_OK:
                if count > 0 { return count }
            case Z_STREAM_END:
                if stream.avail_in > 0 || remaining > 0 { throw endedEarly() }
                return count
            case Z_BUF_ERROR where remaining > 0 || stream.avail_in > 0:
                if count > 0 { return count }
            case Z_BUF_ERROR:
                if count > 0 { return count }
                throw ReadError.unreadable(path: displayPath(index), "the compressed data is truncated: the package is corrupt; rebuild it")
            default:
                let message = stream.msg.map { String(cString: $0) } ?? "error \(status)"
                throw ReadError.unreadable(path: displayPath(index), "the compressed data is corrupt (zlib: \(message)): rebuild the package")
            }
        }
    }

    #if canImport(CIsal)
    /// `inflateSome` through ISA-L. Only a clean end (the whole stored length used, the trailer
    /// right) ends the entry; anything else is handed to `diagnosis`.
    private func isalInflateSome(_ state: UnsafeMutablePointer<inflate_state>, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        if isalEnded { return 0 }
        while true {
            if state.pointee.avail_in == 0 && remaining > 0 {
                state.pointee.next_in = input.baseAddress!.assumingMemoryBound(to: UInt8.self)
                state.pointee.avail_in = UInt32(try refill())
            }
            state.pointee.next_out = buffer.baseAddress!.assumingMemoryBound(to: UInt8.self)
            state.pointee.avail_out = UInt32(min(buffer.count, Int(UInt32.max)))
            let status = isal_inflate(state)
            let count = buffer.count - Int(state.pointee.avail_out)
            guard status == ISAL_DECOMP_OK else { throw try diagnosis() }
            if state.pointee.block_state == ISAL_BLOCK_FINISH {
                guard state.pointee.avail_in == 0 && remaining == 0 else { throw try diagnosis() }
                isalEnded = true
                return count
            }
            if count > 0 { return count }
            if state.pointee.avail_in == 0 && remaining == 0 { throw try diagnosis() }
        }
    }

    /// What is wrong with the entry being streamed, which ISA-L did not inflate cleanly: zlib
    /// streams it again from its start, its output dropped, to say it in zlib's words.
    private func diagnosis() throws -> ReadError {
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 << 10, alignment: 16)
        diagnosing = true
        defer {
            diagnosing = false
            scratch.deallocate()
        }
        try start(index)
        do {
            while try read(into: scratch) > 0 {}
        } catch let error as ReadError {
            return error
        }
        // Two inflaters disagreeing would be a bug in one of them: the data is not trusted.
        return .unreadable(path: displayPath(index), "the compressed data could not be inflated (ISA-L and zlib disagree): rebuild the package")
    }
    #endif

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
        let consumed = record.length - remaining - Int64(stream.avail_in)
        if let copies = XarMergedCopies.copies(declaredLength: record.length, firstStream: consumed) {
            return XarMergedCopies.failure(path: displayPath(index), copies: copies)
        }
        return .unreadable(path: displayPath(index), "the compressed data ends before its declared length: the package is corrupt; rebuild it")
    }

    private func truncated() -> ReadError {
        .unreadable(path: displayPath(index), "the package is truncated: this file's data is cut short")
    }

    /// `pread` until `buffer` is full or the file ends; the bytes read. A refused read throws.
    private func readAvailable(_ buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        let count = readFully(descriptor, buffer, at: offset)
        guard count >= 0 else { throw ReadError.io(path: path, errnoText()) }
        return count
    }
}
