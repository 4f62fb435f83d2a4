import Foundation
import PkgKitSupport

/// Reads a xar itself: the TOC streamed once into a compact `XarEntryTable`, then each file's
/// heap bytes through the package's `PackageBytes` (`pread` for a file), inflated and checked
/// against both TOC digests.
///
/// libarchive's xar reader keeps the whole TOC as strings (about 500 bytes a file) and hashes a
/// stored file twice, once as archived and once as extracted; this reader keeps about 120 bytes
/// a file, hashes stored data once when both digests are the same, and can skip a file's data
/// without reading it. Packages it does not read itself (other encodings or checksum styles,
/// hard links, a nonstandard header) go to the registered `ArchiveSupport` (libarchive).
package final class XarReader: PackageReader, ReadAheadReader {
    package let format: PackageFormat = .xar
    private let path: String
    private let bytes: PackageBytes
    private let heapStart: Int64
    private let table: XarEntryTable
    /// Entries whose data the caller wants (nil: all of them).
    private let wanted: [Bool]?
    private let limits: PackageLimits
    private var tocFailure: ReadError?
    private var index = -1

    // The current file's data: streamed on this thread, or taken from the read-ahead.
    private var record: XarEntryTable.Record?
    private let decoder: XarEntryDecoder
    private var prefetcher: XarPrefetcher?
    private var handle: XarPrefetcher.Handle?
    private var position: Int64 = 0
    private var scratch: UnsafeMutableRawBufferPointer?

    package static let inputSize = XarEntryDecoder.inputSize

    /// What `open` found.
    package enum Opening {
        /// pkgtool reads this package itself.
        case reader(XarReader)
        /// Another reader must: why, in words (a TOC that does not parse, an encoding…).
        case needsArchiveSupport(String)
    }

    /// Opens the xar file at `path`, read with `pread`; see `open(_:path:limits:dataWanted:memo:)`.
    package static func open(path: String, limits: PackageLimits, dataWanted: ((_ entryIndex: Int) -> Bool)? = nil,
                     memo: XarTableMemo? = nil) throws -> Opening {
        try open(PackageFile(path: path), path: path, limits: limits, dataWanted: dataWanted, memo: memo)
    }

    /// Opens the xar whose bytes `bytes` gives, when pkgtool reads it itself; otherwise says why
    /// not, so that libarchive (when registered) reads it and reports its own diagnosis of a TOC
    /// that does not parse. `path` names the package in messages. Every read of the package goes
    /// through `bytes`; one that throws reaches the caller as a `ReadError` (`ReadError.io` unless
    /// the source threw a `ReadError` of its own).
    ///
    /// `dataWanted` is asked once per entry (its index in TOC document order), here, on this
    /// thread: an entry it refuses is still returned by `nextEntry`, but its heap bytes are never
    /// read, inflated or checked, and `readData` returns 0 for it at once. nil wants every entry.
    /// With a `memo`, the table a previous pass kept there is used when the package still holds the
    /// TOC it was parsed from, and the table parsed here is kept for the next pass.
    package static func open(_ bytes: PackageBytes, path: String, limits: PackageLimits, dataWanted: ((_ entryIndex: Int) -> Bool)? = nil,
                     memo: XarTableMemo? = nil) throws -> Opening {
        if let memo, let kept = memo.take(), let reader = try reopen(bytes, path: path, kept: kept, limits: limits, dataWanted: dataWanted) {
            memo.keep(kept)
            return .reader(reader)
        }
        var table = XarEntryTable()
        var count = 0
        let toc: XarTableOfContents
        do {
            toc = try XarTableOfContents.read(bytes, keepEntries: false) { entry in
                count += 1
                // More entries than allowed: the scanner reports it on the first one past the limit.
                if count <= limits.maxEntries + 1 { table.add(entry) }
            }
        } catch .unreadable(let reason) {
            throw ReadError.io(path: path, reason)
        } catch {
            return .needsArchiveSupport(error.description)
        }
        if let reason = table.needsLibArchive { return .needsArchiveSupport("a xar package using \(reason)") }
        guard let tocStyle = XarChecksumStyle(headerAlgorithm: toc.headerChecksumAlgorithm) else {
            return .needsArchiveSupport("a xar package with checksum algorithm \(toc.headerChecksumAlgorithm)")
        }
        table.finish()
        let reader = XarReader(bytes, path: path, heapStart: toc.heapStart, table: table, limits: limits, dataWanted: dataWanted)
        let (failure, digest) = try reader.verifyTOC(toc, style: tocStyle)
        reader.tocFailure = failure
        if let memo, failure == nil, let digest { memo.keep(XarTableMemo.Kept(toc: toc, table: table, digest: digest)) }
        return .reader(reader)
    }

    /// A reader over the table `kept`, when the package still starts with the header and
    /// compressed TOC it was parsed from (and that TOC matches its checksum); nil otherwise.
    private static func reopen(_ bytes: PackageBytes, path: String, kept: XarTableMemo.Kept, limits: PackageLimits,
                               dataWanted: ((Int) -> Bool)?) throws -> XarReader? {
        guard let style = XarChecksumStyle(headerAlgorithm: kept.toc.headerChecksumAlgorithm) else { return nil }
        let reader = XarReader(bytes, path: path, heapStart: kept.toc.heapStart, table: kept.table, limits: limits, dataWanted: dataWanted)
        var header = [UInt8](repeating: 0, count: XarHeader.size)
        guard try header.withUnsafeMutableBytes({ try bytes.read(into: $0, at: 0, path: path) }) == header.count,
              let fields = XarHeader(header),
              fields.tocLength == kept.toc.compressedLength, fields.checksumAlgorithm == kept.toc.headerChecksumAlgorithm else { return nil }
        let (failure, digest) = try reader.verifyTOC(kept.toc, style: style)
        return failure == nil && digest == kept.digest ? reader : nil
    }

    private init(_ bytes: PackageBytes, path: String, heapStart: Int64, table: XarEntryTable, limits: PackageLimits,
                 dataWanted: ((Int) -> Bool)?) {
        self.path = path
        self.bytes = bytes
        self.heapStart = heapStart
        self.table = table
        wanted = dataWanted.map { wants in table.records.indices.map { wants($0) } }
        self.limits = limits
        decoder = XarEntryDecoder(table: table, bytes: bytes, path: path, heapStart: heapStart)
    }

    deinit {
        // No worker is left reading the package once the reader has gone.
        prefetcher?.shutdown()
        scratch?.deallocate()
    }

    package var progress: (done: Int64, total: Int64) { (max(position, decoder.position), bytes.size) }

    package var expectedEntryCount: Int? { table.records.count }

    /// The sha1 the TOC gives for the current file's data, once it has been checked (nil for an
    /// entry whose data is not wanted: nothing of it is checked).
    package var declaredSHA1: String? {
        guard let record, record.extractedStyle == .sha1, isWanted(index) else { return nil }
        return table.extractedDigest(record).hexString
    }

    private func isWanted(_ index: Int) -> Bool { wanted?[index] ?? true }

    /// Whether entry `index` has data to read.
    private func hasWork(_ index: Int) -> Bool {
        let record = table.records[index]
        return record.kind == .file && record.hasData && isWanted(index)
    }

    /// The TOC's own checksum: the digest of the compressed TOC, stored in the heap. Returns what
    /// is wrong, if anything, and the digest computed (nil when the header names no style).
    private func verifyTOC(_ toc: XarTableOfContents, style: XarChecksumStyle) throws -> (failure: ReadError?, digest: [UInt8]?) {
        guard var digest = style.makeDigest() else { return (nil, nil) }
        guard let offset = toc.checksumOffset, let size = toc.checksumSize, offset >= 0, size > 0, size <= 64,
              case let (start, overflow) = heapStart.addingReportingOverflow(offset), !overflow, start <= bytes.size, size <= bytes.size - start else {
            return (.unreadable(path: nil, "the table of contents does not say where its checksum is"), nil)
        }
        let input = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.inputSize, alignment: 16)
        defer { input.deallocate() }
        var done: Int64 = 0
        while done < toc.compressedLength {
            let count = Int(min(Int64(input.count), toc.compressedLength - done))
            guard try bytes.read(into: UnsafeMutableRawBufferPointer(rebasing: input[0..<count]), at: Int64(XarHeader.size) + done, path: path) == count else {
                return (.unreadable(path: nil, "the table of contents is truncated"), nil)
            }
            digest.update(UnsafeRawBufferPointer(rebasing: input[0..<count]))
            done += Int64(count)
        }
        let computed = digest.finalize()
        guard try bytes.read(into: UnsafeMutableRawBufferPointer(rebasing: input[0..<Int(size)]), at: start, path: path) == Int(size) else {
            return (.unreadable(path: nil, "the table of contents' checksum lies past the end of the package"), computed)
        }
        guard computed.elementsEqual(input[0..<Int(size)]) else {
            return (.checksumMismatch(path: nil, "checksum error (the table of contents does not match its checksum)"), computed)
        }
        return (nil, computed)
    }

    // MARK: - Read-ahead

    /// Worker threads for read-ahead: one per core; none on a single core, where they would
    /// only take turns with the reader.
    package static var readAheadWorkers: Int {
        let cores = ProcessInfo.processInfo.activeProcessorCount
        return cores >= 2 ? min(cores, 4) : 0
    }

    package func startReadAhead(_ plan: ReadAheadPlan) -> Bool {
        let workers = Self.readAheadWorkers
        guard prefetcher == nil, tocFailure == nil, workers > 0, index < table.records.count else { return false }
        let (table, bytes, path, heapStart) = (table, bytes, path, heapStart)
        let work = table.records.indices.map { hasWork($0) }
        // The plist is kept whole when only heads are kept: the rules parse it.
        let plist = table.records.indices.first { table.records[$0].parent < 0 && table.name(table.records[$0]).elementsEqual(ContentInfo.fileName.utf8) }
        let prefetcher = XarPrefetcher(plan: plan, table: table, work: work, start: index + 1, maxSize: limits.maxSize)
        prefetcher.start(workers: workers) { prefetcher in
            let decoder = XarEntryDecoder(table: table, bytes: bytes, path: path, heapStart: heapStart)
            switch plan {
            case .deliver:
                return XarDeliveringWorker(prefetcher: prefetcher, decoder: decoder)
            case .verify:
                return XarVerifyingWorker(prefetcher: prefetcher, decoder: decoder,
                                          keepLimit: { $0 == plist ? PackageLimits.maxContentInfoBytes : XarPrefetcher.headBytes })
            }
        }
        self.prefetcher = prefetcher
        return true
    }

    package func verifyData(head: UnsafeMutableRawBufferPointer) throws -> VerifiedData {
        if let prefetcher, let current = handle, prefetcher.plan == .verify {
            handle = nil
            if let result = try prefetcher.verified(current, head: head) { return result }
            // Fewer first bytes were kept than asked for: read the entry here instead.
            try decoder.start(index)
        }
        if scratch == nil { scratch = .allocate(byteCount: Self.inputSize, alignment: 16) }
        return try verifyByReading(head: head, scratch: scratch!)
    }

    // MARK: - Entries

    package func nextEntry() throws -> ArchiveEntry? {
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
        guard record.kind == .file else {
            return ArchiveEntry(path: path, kind: record.kind, mode: UInt32(record.mode), linkTarget: record.kind == .symlink ? table.link(record) ?? [] : nil)
        }
        if hasWork(index) {
            if let prefetcher, prefetcher.covers(index) {
                handle = prefetcher.handle(index)
                position = heapStart &+ max(record.offset, 0) &+ max(record.length, 0)
            } else {
                try decoder.start(index)
            }
        }
        var entry = ArchiveEntry(path: path, kind: .file, mode: UInt32(record.mode), declaredSize: record.hasData ? (record.size >= 0 ? record.size : nil) : 0)
        entry.dataWithheld = !isWanted(index)
        entry.chunks = table.chunks(record)
        return entry
    }

    private func endEntry() {
        decoder.stop()
        handle = nil
        record = nil
    }

    package func readData(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard record != nil, isWanted(index) else { return 0 }
        if var current = handle, let prefetcher {
            if prefetcher.plan == .deliver {
                defer { handle = current }
                return try prefetcher.read(&current, into: buffer)
            }
            // Read ahead only to be checked: this entry's bytes are read here after all.
            handle = nil
            try decoder.start(index)
        }
        return try decoder.read(into: buffer)
    }
}
