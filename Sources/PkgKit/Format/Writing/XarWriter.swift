import Crypto
import Foundation
import PkgKitSupport

/// Writes a xar archive of our own making, byte-for-byte reproducible: ids 1..N in depth-first
/// order, heap data in the same order (a file identical to an earlier one sharing its bytes, see
/// `HeapCoalescing`), fixed modes, owners and times, sha1 everywhere (the one checksum both
/// libarchive and Apple's xar verify). See docs/format.md.
///
/// libarchive's own xar writer stamps the time of day and inode numbers into the TOC, so two
/// builds of one tree would differ; hence this writer.
package struct XarWriter {
    package var options: WriteOptions
    /// Where scratch files go (the output's folder, so no data crosses file systems).
    package var scratchDirectory: String

    package init(options: WriteOptions, scratchDirectory: String) {
        self.options = options
        self.scratchDirectory = scratchDirectory
    }

    private struct HeapRecord {
        var file: EncodedFile
        var heapOffset: Int64
        var scratchOffset: Int64?
    }

    /// What assembling the package needs of a file once its TOC entry is written: about 60 bytes,
    /// kept for every file (a `HeapRecord` lives only until its batch's entries are written).
    private struct Placement {
        var item: Int32
        /// Where its stored bytes are in the heap scratch, or -1: read again from the source.
        var scratchOffset: Int64
        var length: Int64
        var size: Int64
        var sha1: Insecure.SHA1Digest
    }

    static let headerSize = 28
    package static let bufferSize = 1 << 20
    /// The most heap bytes one in-kernel copy moves before the hashing thread is told of them,
    /// so that it reads the package back while the copying goes on.
    static let copyRunLimit: Int64 = 8 << 20

    /// Writes `items` as a xar. `listFiles` asks for every file's digest and sizes in the result
    /// (for `content-unchanged`); otherwise `files` is empty and nothing per file outlives the TOC
    /// but its place in the heap.
    package func write(_ items: [SourceItem], to output: FileOutput, listFiles: Bool = true, progress: ((Int64) -> Void)? = nil) throws -> WrittenPackage {
        let jobs = max(1, options.jobs)
        let encoder = FileEncoder(mode: options.compression, profile: DeflateProfile(level: options.level),
                                  scratchDirectory: scratchDirectory, chunking: options.chunks, jobs: jobs)
        let fileIndices = items.indices.filter { items[$0].kind == .file }
        let coalescing = options.coalesce ? HeapCoalescing(items) : nil
        let heap = try FileOutput.anonymous(in: scratchDirectory)
        // Records of the batch being written into the TOC; then only placements remain.
        var records: [Int: HeapRecord] = [:]
        var placements: [Placement] = []
        placements.reserveCapacity(fileIndices.count)
        var files: [WrittenFile] = []
        var heapOffset: Int64 = 20
        var bytesDone: Int64 = 0
        let copyBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.bufferSize, alignment: 16)
        defer { copyBuffer.deallocate() }
        // The TOC is written as batches complete, in the same order, on this (otherwise idle)
        // thread while the workers compress.
        let tocScratch = try FileOutput.anonymous(in: scratchDirectory)
        let toc = try XarTOCWriter(scratch: tocScratch)
        try beginTOC(toc)
        var openFolders: [[UInt8]] = []
        var tocWritten = 0
        // Small files travel in batches: one hand-over between threads per file would cost more
        // than compressing a 5 KB file.
        let batches = Self.batches(fileIndices, sizes: { items[$0].size })
        // Buffers and compressors are kept from batch to batch, one set per thread at a time.
        let scratchPool = EncoderScratch.Pool(profile: encoder.profile)
        try OrderedWorkPool.run(count: batches.count, jobs: jobs, window: jobs * 2, work: { position in
            let scratch = scratchPool.take()
            defer { scratchPool.give(scratch) }
            return try batches[position].map { try encoder.encode(items[$0], index: $0, coalescing: coalescing, scratch: scratch) }
        }, consume: { position, encoded in
            for (index, file) in zip(batches[position], encoded) {
                if let key = file.contentKey, let (copy, chunks) = coalescing?.storedCopy(key) {
                    // The same bytes are in the heap already: the entry points at them.
                    var shared = file
                    (shared.length, shared.encoding, shared.archivedSHA1, shared.chunks) = (copy.length, copy.encoding, copy.archivedSHA1, chunks)
                    shared.bytes = .empty
                    records[index] = HeapRecord(file: shared, heapOffset: copy.heapOffset, scratchOffset: nil)
                    if listFiles {
                        files.append(WrittenFile(path: items[index].path.string, size: file.size, storedSize: copy.length,
                                                 encoding: copy.encoding, sha1: file.extractedSHA1.hexString))
                    }
                    bytesDone += file.size
                    continue
                }
                // An earlier item claimed these bytes, so they are stored already unless its
                // source changed between being hashed and being encoded.
                if case .duplicate = file.bytes { throw WriteError.sourceChanged(path: items[index].path.description) }
                var record = HeapRecord(file: file, heapOffset: heapOffset, scratchOffset: nil)
                switch file.bytes {
                case .memory(let bytes):
                    record.scratchOffset = heap.position
                    try heap.write(bytes)
                case .scratch(let spill, let length):
                    record.scratchOffset = heap.position
                    try spill.copy(offset: 0, length: length, buffer: copyBuffer) { try heap.write($0) }
                case .source, .empty, .duplicate:
                    break
                }
                if case .empty = file.bytes {} else { heapOffset += file.length }
                // Spilled bytes now live in the heap scratch; drop the spill file and memory copy.
                record.file.bytes = { if case .source = file.bytes { return file.bytes }; return .empty }()
                records[index] = record
                if let key = file.contentKey { coalescing?.recordStored(key, heapOffset: record.heapOffset, file: file) }
                if case .empty = file.bytes {} else {
                    placements.append(Placement(item: Int32(index), scratchOffset: record.scratchOffset ?? -1, length: file.length,
                                                size: file.size, sha1: file.extractedSHA1))
                }
                if listFiles {
                    files.append(WrittenFile(path: items[index].path.string, size: file.size, storedSize: file.length,
                                             encoding: file.encoding, sha1: file.extractedSHA1.hexString))
                }
                bytesDone += file.size
            }
            let upTo = (batches[position].last ?? 0) + 1
            try writeEntries(items, tocWritten..<upTo, records: records, openFolders: &openFolders, toc)
            records.removeAll(keepingCapacity: true)
            tocWritten = upTo
            progress?(bytesDone)
        })

        try writeEntries(items, tocWritten..<items.count, records: records, openFolders: &openFolders, toc)
        try endTOC(openFolders: openFolders, toc)
        let (tocCompressed, tocUncompressed, tocChecksum) = try toc.finish()

        let hasher = BackgroundHasher(descriptor: output.descriptor, path: output.path)
        // On a failed write the hashing thread still has to be let go.
        defer { _ = try? hasher.finish() }
        var header = [UInt8]()
        header += XarHeader.magic
        header += bigEndian(UInt16(Self.headerSize))
        header += bigEndian(UInt16(1))
        header += bigEndian(UInt64(tocCompressed))
        header += bigEndian(UInt64(tocUncompressed))
        header += bigEndian(UInt32(1))
        try output.write(header)
        try tocScratch.copy(offset: 0, length: tocCompressed, buffer: copyBuffer) { try output.write($0) }
        try output.write(tocChecksum)
        hasher.advance(to: output.position)
        // The heap goes in by in-kernel copies. Stored files of 64 KiB and more are copied from
        // their sources and checked by the hashing thread as it reads the package back for its
        // sha256: the bytes in the package must still be the ones hashed in the first pass.
        // Everything else lies in the heap scratch in heap order, so each run of it between two
        // such files goes in with one copy (100,000 tiny files: one call, not 100,000).
        var run: (offset: Int64, length: Int64)?
        func copyRun() throws {
            guard let (offset, length) = run else { return }
            run = nil
            let copied = try output.append(from: heap.descriptor, offset: offset, length: length, buffer: copyBuffer, path: heap.path)
            guard copied == length else { throw WriteError.io(path: heap.path, "scratch file ended early") }
            hasher.advance(to: output.position)
            output.startWriteback()
        }
        for placement in placements {
            if placement.scratchOffset >= 0 {
                if let (offset, length) = run, offset + length == placement.scratchOffset, length < Self.copyRunLimit {
                    run = (offset, length + placement.length)
                } else {
                    try copyRun()
                    run = (placement.scratchOffset, placement.length)
                }
            } else {
                try copyRun()
                try copyStored(items[Int(placement.item)], size: placement.size, sha1: placement.sha1, hasher: hasher, buffer: copyBuffer, to: output)
                hasher.advance(to: output.position)
                output.startWriteback()
            }
        }
        try copyRun()
        let digest = try hasher.finish()
        return WrittenPackage(files: files, archiveBytes: output.position, sha256: digest)
    }

    /// Groups consecutive files into batches of about `batchBytes` (a large file alone).
    static func batches(_ indices: [Int], sizes: (Int) -> Int64, batchBytes: Int64 = 1 << 20, maxCount: Int = 512) -> [[Int]] {
        var batches: [[Int]] = []
        var current: [Int] = []
        var bytes: Int64 = 0
        for index in indices {
            current.append(index)
            bytes += sizes(index)
            if bytes >= batchBytes || current.count >= maxCount {
                batches.append(current)
                current = []
                bytes = 0
            }
        }
        if !current.isEmpty { batches.append(current) }
        return batches
    }

    /// Copies a stored file from its source; `hasher` checks the copy against the sha1 of the
    /// first pass, and its size is checked here.
    private func copyStored(_ item: SourceItem, size: Int64, sha1: Insecure.SHA1Digest, hasher: BackgroundHasher,
                            buffer: UnsafeMutableRawBufferPointer, to output: FileOutput) throws {
        let changed = WriteError.sourceChanged(path: item.path.description)
        hasher.expect(sha1: sha1, start: output.position, count: size, failure: changed)
        switch item.origin {
        case .file, .walked:
            let absolute = item.sourcePath ?? []
            let descriptor = absolute.withCString { open($0, O_RDONLY | O_CLOEXEC | O_NOFOLLOW) }
            guard descriptor >= 0 else { throw changed }
            defer { close(descriptor) }
            let copied = try output.append(from: descriptor, offset: 0, length: size, buffer: buffer,
                                           path: String(decoding: absolute, as: UTF8.self))
            var info = stat()
            guard copied == size, fstat(descriptor, &info) == 0, Int64(info.st_size) == size else { throw changed }
        case .data(let bytes):
            guard Int64(bytes.count) == size else { throw changed }
            try output.write(bytes)
        case .none:
            throw changed
        }
    }

    /// Opens the TOC: everything before the first `<file>`.
    private func beginTOC(_ toc: XarTOCWriter) throws {
        try toc.start("xar")
        try toc.start("toc")
        try toc.element("creation-time", xarTimestamp(options.timestamp, withZone: false))
        try toc.start("checksum")
        try toc.attribute("style", "sha1")
        try toc.element("offset", "0")
        try toc.element("size", "20")
        try toc.end()
    }

    /// Writes the `<file>` elements of `items[range]`, nesting each under its open folders. Files
    /// in the range must have their heap records already.
    private func writeEntries(_ items: [SourceItem], _ range: Range<Int>, records: [Int: HeapRecord],
                              openFolders: inout [[UInt8]], _ toc: XarTOCWriter) throws {
        let time = xarTimestamp(options.timestamp)
        for index in range {
            let item = items[index]
            while let folder = openFolders.last, !isInside(item.path.bytes, folder) {
                try toc.end()
                openFolders.removeLast()
            }
            try toc.start("file")
            try toc.attribute("id", String(index + 1))
            try writeName(item.path.lastComponent, toc)
            switch item.kind {
            case .directory:
                try toc.element("type", "directory")
                try writeOwnership(mode: "0755", time: time, toc)
                openFolders.append(item.path.bytes)
                continue
            case .symlink:
                try toc.element("type", "symlink")
                try writeOwnership(mode: "0755", time: time, toc)
                try toc.element("link", String(decoding: item.linkTarget ?? [], as: UTF8.self))
            default:
                try toc.element("type", "file")
                try writeOwnership(mode: "0644", time: time, toc)
                if let record = records[index], record.file.size > 0 {
                    try writeData(record, toc)
                }
            }
            try toc.end()
        }
    }

    /// Closes the open folders and the TOC.
    private func endTOC(openFolders: [[UInt8]], _ toc: XarTOCWriter) throws {
        for _ in openFolders { try toc.end() }
        try toc.end()
        try toc.end()
    }

    private func writeOwnership(mode: String, time: String, _ toc: XarTOCWriter) throws {
        try toc.element("mode", mode)
        try toc.element("uid", "0")
        try toc.element("gid", "0")
        try toc.element("mtime", time)
    }

    private func writeData(_ record: HeapRecord, _ toc: XarTOCWriter) throws {
        let file = record.file
        try toc.start("data")
        try toc.element("length", String(file.length))
        try toc.element("offset", String(record.heapOffset))
        try toc.element("size", String(file.size))
        try toc.start("encoding")
        try toc.attribute("style", file.encoding.xarStyle)
        try toc.end()
        try toc.start("archived-checksum")
        try toc.attribute("style", "sha1")
        try toc.text(file.archivedSHA1.hexString)
        try toc.end()
        try toc.start("extracted-checksum")
        try toc.attribute("style", "sha1")
        try toc.text(file.extractedSHA1.hexString)
        try toc.end()
        try toc.end()
        if let chunks = file.chunks {
            try toc.start("chunks")
            for (name, value) in chunks.attributes { try toc.attribute(name, value) }
            try toc.text(chunks.base64)
            try toc.end()
        }
    }

    /// Plain text when the name fits ISO-8859-1, base64 of its UTF-8 otherwise, as both xar writers do.
    private func writeName(_ name: String, _ toc: XarTOCWriter) throws {
        if name.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value <= 0xFF && $0.value != 0x7F }) {
            try toc.element("name", name)
        } else {
            try toc.start("name")
            try toc.attribute("enctype", "base64")
            try toc.text(Data(name.utf8).base64EncodedString())
            try toc.end()
        }
    }

    private func isInside(_ path: [UInt8], _ folder: [UInt8]) -> Bool {
        path.count > folder.count && path[folder.count] == UInt8(ascii: "/") && path.starts(with: folder)
    }

    private func bigEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian) { Array($0) }
    }
}
