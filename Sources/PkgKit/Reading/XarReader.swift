internal import CZlib
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads a xar itself: the TOC streamed once into a compact `XarEntryTable`, then each file's
/// heap bytes with `pread`, inflated by zlib and checked against both TOC digests.
///
/// libarchive's xar reader keeps the whole TOC as strings (about 500 bytes a file) and hashes a
/// stored file twice, once as archived and once as extracted; this reader keeps about 120 bytes
/// a file, hashes stored data once when both digests are the same, and can skip a file's data
/// without reading it. Packages it does not read itself (other encodings or checksum styles,
/// hard links, a nonstandard header) go to the registered `ArchiveSupport` (libarchive).
final class XarReader: PackageReader {
    let format: PackageFormat = .xar
    private let path: String
    private let descriptor: Int32
    private let fileSize: Int64
    private let heapStart: Int64
    private let table: XarEntryTable
    private var tocFailure: ReadError?
    private var index = -1

    // The current file's data.
    private var reading = false
    private var record: XarEntryTable.Record?
    private var currentPath = ArchivePath(raw: [])
    /// The current path for messages, made only when one is needed.
    private var displayPath: String { currentPath.description }
    private var position: Int64 = 0
    private var remaining: Int64 = 0
    private var produced: Int64 = 0
    private var archivedDigest: XarDigest?
    private var extractedDigest: XarDigest?
    private var hashedOnce = false
    private var stream = z_stream()
    private var streamOpen = false
    private let input: UnsafeMutableRawBufferPointer

    static let inputSize = 1 << 20

    /// What `open` found.
    enum Opening {
        /// pkgtool reads this package itself.
        case reader(XarReader)
        /// Another reader must: why, in words (a TOC that does not parse, an encoding…).
        case needsArchiveSupport(String)
    }

    /// Opens the xar at `path` when pkgtool reads it itself; otherwise says why not, so that
    /// libarchive (when registered) reads it and reports its own diagnosis of a TOC that does not parse.
    static func open(path: String, limits: PackageLimits) throws -> Opening {
        var table = XarEntryTable()
        var count = 0
        guard let toc = XarTableOfContents.read(path, keepEntries: false, visit: { entry in
            count += 1
            // More entries than allowed: the scanner reports it on the first one past the limit.
            if count <= limits.maxEntries + 1 { table.add(entry) }
        }) else { return .needsArchiveSupport("the table of contents cannot be read (truncated or corrupt)") }
        if let reason = table.needsLibArchive { return .needsArchiveSupport("a xar package using \(reason)") }
        guard let tocStyle = XarChecksumStyle(headerAlgorithm: toc.headerChecksumAlgorithm) else {
            return .needsArchiveSupport("a xar package with checksum algorithm \(toc.headerChecksumAlgorithm)")
        }
        table.finish()
        let descriptor = openReadOnly(path)
        guard descriptor >= 0 else { throw ReadError.io(path: path, errnoText()) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let message = errnoText()
            close(descriptor)
            throw ReadError.io(path: path, message)
        }
        let reader = XarReader(path: path, descriptor: descriptor, fileSize: Int64(info.st_size), heapStart: toc.heapStart, table: table)
        reader.tocFailure = try reader.verifyTOC(toc, style: tocStyle)
        return .reader(reader)
    }

    private init(path: String, descriptor: Int32, fileSize: Int64, heapStart: Int64, table: XarEntryTable) {
        self.path = path
        self.descriptor = descriptor
        self.fileSize = fileSize
        self.heapStart = heapStart
        self.table = table
        input = .allocate(byteCount: Self.inputSize, alignment: 16)
    }

    deinit {
        if streamOpen { inflateEnd(&stream) }
        input.deallocate()
        close(descriptor)
    }

    var progress: (done: Int64, total: Int64) { (position, fileSize) }

    var expectedEntryCount: Int? { table.records.count }

    /// The sha1 the TOC gives for the current file's data, once it has been checked.
    var declaredSHA1: String? {
        guard let record, record.extractedStyle == .sha1 else { return nil }
        return table.extractedDigest(record).hexString
    }

    /// The TOC's own checksum: the digest of the compressed TOC, stored in the heap.
    private func verifyTOC(_ toc: XarTableOfContents, style: XarChecksumStyle) throws -> ReadError? {
        guard var digest = style.makeDigest() else { return nil }
        guard let offset = toc.checksumOffset, let size = toc.checksumSize, offset >= 0, size > 0, size <= 64,
              case let (start, overflow) = heapStart.addingReportingOverflow(offset), !overflow, start <= fileSize, size <= fileSize - start else {
            return .unreadable(path: nil, "the table of contents does not say where its checksum is")
        }
        var done: Int64 = 0
        while done < toc.compressedLength {
            let count = Int(min(Int64(input.count), toc.compressedLength - done))
            guard try readAvailable(UnsafeMutableRawBufferPointer(rebasing: input[0..<count]), at: 28 + done) == count else {
                return .unreadable(path: nil, "the table of contents is truncated")
            }
            digest.update(UnsafeRawBufferPointer(rebasing: input[0..<count]))
            done += Int64(count)
        }
        guard try readAvailable(UnsafeMutableRawBufferPointer(rebasing: input[0..<Int(size)]), at: start) == Int(size) else {
            return .unreadable(path: nil, "the table of contents' checksum lies past the end of the package")
        }
        guard digest.finalize().elementsEqual(input[0..<Int(size)]) else {
            return .checksumMismatch(path: nil, "checksum error (the table of contents does not match its checksum)")
        }
        return nil
    }

    func nextEntry() throws -> ArchiveEntry? {
        if let failure = tocFailure {
            tocFailure = nil
            index = table.records.count
            throw failure
        }
        endEntry()
        index += 1
        guard index < table.records.count else { return nil }
        let record = table.records[index]
        guard let name = table.path(at: index, limit: 4 * PackageLimits.maxPathBytes) else {
            throw ReadError.unreadable(path: nil, "an entry name is more than \(4 * PackageLimits.maxPathBytes) bytes long")
        }
        let path = ArchivePath(raw: name)
        self.record = record
        currentPath = path
        guard record.kind == .file else {
            return ArchiveEntry(path: path, kind: record.kind, mode: UInt32(record.mode), linkTarget: record.kind == .symlink ? table.link(record) ?? [] : nil)
        }
        try startData(record)
        return ArchiveEntry(path: path, kind: .file, mode: UInt32(record.mode), declaredSize: record.hasData ? (record.size >= 0 ? record.size : nil) : 0)
    }

    private func startData(_ record: XarEntryTable.Record) throws {
        produced = 0
        guard record.hasData else {
            remaining = 0
            reading = false
            return
        }
        guard record.offset >= 0, record.length >= 0,
              case let (start, overflow) = heapStart.addingReportingOverflow(record.offset), !overflow,
              start <= fileSize, record.length <= fileSize - start || record.gzip else {
            throw ReadError.unreadable(path: displayPath, "the data lies outside the package (truncated or corrupt)")
        }
        position = start
        remaining = record.length
        archivedDigest = record.archivedStyle.makeDigest()
        // Stored data hashed once when both digests say the same thing.
        hashedOnce = !record.gzip && record.archivedStyle == record.extractedStyle
            && table.archivedDigest(record).elementsEqual(table.extractedDigest(record))
        extractedDigest = hashedOnce ? nil : record.extractedStyle.makeDigest()
        if record.gzip && record.length > 0 {
            if streamOpen { inflateReset(&stream) } else {
                guard CZlib_inflateInit(&stream) == Z_OK else { throw ReadError.io(path: path, "zlib could not start") }
                streamOpen = true
            }
            stream.avail_in = 0
        }
        reading = true
    }

    private func endEntry() {
        reading = false
        record = nil
    }

    func readData(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard reading, let record else { return 0 }
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
                throw ReadError.unreadable(path: displayPath, "the data is longer than the \(record.size) bytes its header declares")
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

    private func inflateSome(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        while true {
            if stream.avail_in == 0 && remaining > 0 {
                // Compressed data may run past the end of the file: what is there is inflated,
                // so that a stream ending early (merged copies) is told from a cut-off file.
                let wanted = Int(min(Int64(input.count), remaining))
                let count = try readAvailable(UnsafeMutableRawBufferPointer(rebasing: input[0..<wanted]), at: position)
                guard count > 0 else { throw truncated() }
                let target = UnsafeMutableRawBufferPointer(rebasing: input[0..<count])
                archivedDigest?.update(UnsafeRawBufferPointer(target))
                position += Int64(count)
                remaining -= Int64(count)
                stream.next_in = input.baseAddress!.assumingMemoryBound(to: Bytef.self)
                stream.avail_in = uInt(count)
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
                throw ReadError.unreadable(path: displayPath, "the compressed data is truncated: the package is corrupt; rebuild it")
            default:
                let message = stream.msg.map { String(cString: $0) } ?? "error \(status)"
                throw ReadError.unreadable(path: displayPath, "the compressed data is corrupt (zlib: \(message)): rebuild the package")
            }
        }
    }

    /// After the last byte: sizes and both digests.
    private func check(_ record: XarEntryTable.Record) throws {
        if record.size >= 0, produced != record.size {
            throw ReadError.unreadable(path: displayPath, "the data is \(produced) bytes, not the \(record.size) its header declares: the package is corrupt")
        }
        if let digest = archivedDigest?.finalize(), !digest.elementsEqual(table.archivedDigest(record)) {
            throw ReadError.checksumMismatch(path: displayPath, "checksum error (the stored data's \(record.archivedStyle) is \(digest.hexString), the table of contents says \(table.archivedDigest(record).hexString))")
        }
        // Stored data hashed once was checked against both digests above: they are the same.
        if !hashedOnce, let extracted = extractedDigest?.finalize(), !extracted.elementsEqual(table.extractedDigest(record)) {
            throw ReadError.checksumMismatch(path: displayPath, "checksum error (the data's \(record.extractedStyle) is \(extracted.hexString), the table of contents says \(table.extractedDigest(record).hexString))")
        }
    }

    /// The zlib stream ended with stored bytes left over: libarchive's writer merges a path given
    /// twice into one entry like this; anything else is corruption.
    private func endedEarly() -> ReadError {
        let consumed = record!.length - remaining - Int64(stream.avail_in)
        if let copies = XarMergedCopies.copies(declaredLength: record!.length, firstStream: consumed) {
            return XarMergedCopies.failure(path: displayPath, copies: copies)
        }
        return .unreadable(path: displayPath, "the compressed data ends before its declared length: the package is corrupt; rebuild it")
    }

    private func truncated() -> ReadError {
        .unreadable(path: displayPath, "the package is truncated: this file's data is cut short")
    }

    /// `pread` until `buffer` is full or the file ends; the bytes read. A refused read throws.
    private func readAvailable(_ buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        let count = readFully(descriptor, buffer, at: offset)
        guard count >= 0 else { throw ReadError.io(path: path, errnoText()) }
        return count
    }
}
