import Crypto
import Foundation
import PkgKitSupport
import PkgKitFormat
internal import CSyscalls

/// Where each chunk of an installed version's large files lies, by chunk digest: the index a
/// delta update looks a changed file's chunks up in, whichever installed file holds them (a
/// renamed, split or merged bundle shares its chunks with files of other names). casync's seed
/// and Steam's depot chunk store do the same.
///
/// Content-defined boundaries depend on the chunker's sizes, so an index holds the cut of one
/// `ChunkParameters` (the new package's); other sizes mean another index. It is kept beside the
/// stat cache as `DIR/<id>/.chunk-index-<version>` and, like it, believed per file only while the
/// file is still who it was when it was cut (`FileIdentity`: device, inode, mode, size, mtime and
/// ctime); a file that changed is cut again, one that is gone is dropped.
///
/// An index is only a hint: every chunk copied from an installed file is hashed and checked
/// against the table's digest as it is written (`ChunkAssembly`), so a stale or damaged index
/// costs a download, never a wrong byte. Its memory is bounded (`memoryLimit`), whatever chunk sizes
/// a package declares: past the bound, files are left out of the index (their chunks are fetched).
package struct ChunkIndex: Sendable {
    /// One indexed file: its path below the version folder, and who it was when it was cut.
    package struct File: Sendable, Equatable {
        package var path: String
        package var identity: FileIdentity
    }

    /// One chunk: its digest (the whole 16 bytes a chunk table names it by), where it lies, and
    /// which file of `files` holds it.
    package struct Entry: Sendable {
        package var digest: ChunkDigest
        package var offset: Int64
        package var file: UInt32
        package var length: UInt32
    }

    /// Where a chunk lies: in which file below the version folder, at which offset.
    package struct Location: Sendable, Equatable {
        package var path: String
        package var offset: Int64
        package var length: Int

        /// These values.
        package init(path: String, offset: Int64, length: Int) {
            (self.path, self.offset, self.length) = (path, offset, length)
        }
    }

    /// The version folder indexed, a name inside the product folder.
    package let version: String
    /// The sizes the files were cut with.
    package let parameters: ChunkParameters
    /// Indexed files; an entry's `file` is a position here.
    package private(set) var files: [File] = []
    /// Every chunk, sorted by digest.
    private var entries: [Entry] = []
    /// Files read (cut, and hashed when their sha1 was not known) by the last `refresh`: zero when
    /// the kept index still described every candidate.
    package private(set) var filesRead = 0
    /// Whether the index differs from the file it was read from.
    private var changed = false

    /// The most memory an index takes (its entries and the files they name): a 2 GB install cut
    /// at the standard sizes needs about a tenth of it.
    package static let memoryLimit = 16 << 20
    /// Bytes an entry takes in memory.
    package static let entryBytes = MemoryLayout<Entry>.stride
    /// The most chunks one file read for the index may give.
    static let maxEntries = memoryLimit / entryBytes

    /// An empty index of version folder `version` for `parameters`.
    package init(version: String, parameters: ChunkParameters) {
        self.version = version
        self.parameters = parameters
    }

    /// How many chunks are indexed.
    package var count: Int { entries.count }

    /// The memory the index's entries and file names take.
    package var memoryBytes: Int {
        entries.capacity * Self.entryBytes + files.reduce(0) { $0 + MemoryLayout<File>.stride + $1.path.utf8.count }
    }

    /// Where a chunk with `digest` lies, when an indexed file holds one.
    package func locate(_ digest: ChunkDigest) -> Location? {
        var low = 0, high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if Self.precedes(entries[middle].digest, digest) { low = middle + 1 } else { high = middle }
        }
        guard low < entries.count, entries[low].digest == digest else { return nil }
        let entry = entries[low]
        return Location(path: files[Int(entry.file)].path, offset: entry.offset, length: Int(entry.length))
    }

    /// The entries with `added`, sorted, in an array of exactly their size: the bound is on what
    /// the index holds, not on how an array grew.
    private mutating func settle(adding added: [Entry]) {
        var all: [Entry] = []
        all.reserveCapacity(entries.count + added.count)
        all += entries
        all += added
        all.sort { Self.precedes($0.digest, $1.digest) }
        entries = all
    }

    /// The order entries are kept in: by digest.
    private static func precedes(_ a: ChunkDigest, _ b: ChunkDigest) -> Bool {
        a.high != b.high ? a.high < b.high : a.low < b.low
    }

    // MARK: - Bringing it up to date

    /// One installed file the index may cover: its path below the version folder, who it is on
    /// disk now, and whether its sha1 is still to be found (the scan left it for this read).
    package struct Candidate: Sendable {
        package var path: String
        package var identity: FileIdentity
        package var needsSHA1: Bool

        /// A candidate as the scan found it.
        package init(path: String, identity: FileIdentity, needsSHA1: Bool) {
            (self.path, self.identity, self.needsSHA1) = (path, identity, needsSHA1)
        }
    }

    /// What reading one candidate found: its chunks (when it was cut) and, when asked, its sha1.
    struct Read: Sendable {
        var path: String
        var identity: FileIdentity
        var chunks: [(digest: ChunkDigest, offset: Int64, length: UInt32)]
        var hashed: InstalledTree.Hashed?
    }

    /// This index brought up to date with `candidates` of version folder `version` in `product`:
    /// entries of files still who they were are kept, files that are gone or changed dropped, and
    /// the others read once, on every core: cut when they are at least `minimumSize` bytes, and
    /// hashed in the same read when their sha1 is still to be found (returned by path, who they
    /// were while read included). A file that changed while it was read is neither indexed nor hashed.
    package func refreshed(_ product: ProductFolder, candidates: [Candidate], minimumSize: Int64,
                           cancellation: Cancellation?) throws -> (index: ChunkIndex, hashed: [String: InstalledTree.Hashed]) {
        var index = ChunkIndex(version: version, parameters: parameters)
        var kept: [String: Int] = [:]
        for (position, file) in files.enumerated() { kept[file.path] = position }
        var reads: [Candidate] = []
        var keptFiles: [Int: Int] = [:]
        for candidate in candidates {
            let cut = candidate.identity.size >= minimumSize
            if cut, !candidate.needsSHA1, let position = kept[candidate.path], files[position].identity == candidate.identity {
                keptFiles[position] = index.files.count
                index.files.append(files[position])
            } else if cut || candidate.needsSHA1 {
                reads.append(candidate)
            }
        }
        // Entries of the files kept, renumbered; still sorted.
        index.entries.reserveCapacity(entries.count)
        for entry in entries {
            guard let position = keptFiles[Int(entry.file)] else { continue }
            var moved = entry
            moved.file = UInt32(position)
            index.entries.append(moved)
        }
        index.changed = index.files.count != files.count || !reads.isEmpty
        index.filesRead = reads.count
        var hashed: [String: InstalledTree.Hashed] = [:]
        var added: [Entry] = []
        var budget = Self.memoryLimit - index.memoryBytes
        let parameters = self.parameters
        let folder = openat(product.descriptor, version, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard folder >= 0 else { throw InstallError.io(path: product.path(version), errnoText()) }
        defer { close(folder) }
        let toRead = reads
        let jobs = min(InstalledTree.maxJobs, ProcessInfo.processInfo.activeProcessorCount, toRead.count)
        try OrderedWorkPool.run(count: toRead.count, jobs: jobs, window: 2 * max(jobs, 1), work: { position in
            try cancellation?.check()
            let candidate = toRead[position]
            return try Self.read(folder, candidate,
                                 parameters: candidate.identity.size >= minimumSize ? parameters : nil, cancellation: cancellation)
        }, consume: { _, read in
            guard let read else { return }
            if let sha1 = read.hashed { hashed[read.path] = sha1 }
            let cost = read.chunks.count * Self.entryBytes + MemoryLayout<File>.stride + read.path.utf8.count
            guard !read.chunks.isEmpty, cost <= budget else { return }
            budget -= cost
            let position = UInt32(index.files.count)
            index.files.append(File(path: read.path, identity: read.identity))
            for chunk in read.chunks {
                added.append(Entry(digest: chunk.digest, offset: chunk.offset, file: position, length: chunk.length))
            }
        })
        index.settle(adding: added)
        return (index, hashed)
    }

    /// Reads the file `candidate.path` of the version folder `folder` once: cut with `parameters`
    /// (each digest once, at its first offset) when given, hashed when its sha1 is asked; nil when
    /// it is not a regular file any more or changed while it was read.
    private static func read(_ folder: Int32, _ candidate: Candidate, parameters: ChunkParameters?,
                             cancellation: Cancellation?) throws -> Read? {
        guard PathSafety.componentsAreNames(candidate.path) else { return nil }
        let fd = openat(folder, candidate.path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        let before = FileIdentity(info)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        var seen = Set<ChunkDigest>()
        var chunks: [(digest: ChunkDigest, offset: Int64, length: UInt32)] = []
        var chunker = parameters.map(ContentDefinedChunker.init)
        var hasher = ChunkHasher()
        var sha1 = candidate.needsSHA1 ? Insecure.SHA1() : nil
        var head: [UInt8] = []
        var position: Int64 = 0, chunkStart: Int64 = 0
        func endChunk(at end: Int64) {
            let digest = hasher.digest
            if seen.insert(digest).inserted { chunks.append((digest, chunkStart, UInt32(end - chunkStart))) }
            // More chunks than a whole index may hold (sizes a package chose to be tiny): the
            // file is left out, and only hashed if that was asked.
            if chunks.count > maxEntries {
                (chunker, chunks, seen) = (nil, [], [])
            }
            chunkStart = end
            hasher = ChunkHasher()
        }
        while true {
            try cancellation?.check()
            // Left out of the index, with no sha1 asked: nothing more to read it for.
            if chunker == nil && sha1 == nil { return nil }
            let count = readFully(fd, buffer, at: position)
            guard count >= 0 else { return nil }
            if count == 0 { break }
            let piece = UnsafeRawBufferPointer(rebasing: buffer[0..<count])
            if sha1 != nil {
                sha1!.update(bufferPointer: piece)
                if head.count < ExecutableFormat.headBytes { head += piece.prefix(ExecutableFormat.headBytes - head.count) }
            }
            if chunker != nil {
                var taken = 0
                while taken < count, chunker != nil {
                    let (length, ends) = chunker!.scan(UnsafeRawBufferPointer(rebasing: piece[taken...]))
                    hasher.update(UnsafeRawBufferPointer(rebasing: piece[taken ..< taken + length]))
                    taken += length
                    if ends { endChunk(at: position + Int64(taken)) }
                }
            }
            position += Int64(count)
        }
        if chunker != nil, position > chunkStart { endChunk(at: position) }
        guard fstat(fd, &info) == 0, FileIdentity(info) == before, position == before.size else { return nil }
        let hashed = sha1.map { InstalledTree.Hashed(sha1: SHA1Value($0.finalize()), executable: ExecutableFormat.detect(head), identity: before) }
        return Read(path: candidate.path, identity: before, chunks: chunks, hashed: hashed)
    }

    // MARK: - From the package a version was installed from

    /// What the files an update reused carry into its version's index: each file's path below the
    /// new version folder and its path in `previous`'s version folder, whose index describes it.
    package struct Carried: Sendable {
        package var files: [(path: String, from: String)]
        package var previous: ChunkIndex

        /// These files, from `previous`.
        package init(files: [(path: String, from: String)], previous: ChunkIndex) {
            (self.files, self.previous) = (files, previous)
        }
    }

    /// Keeps the index of version folder `version` of `product` as the verified TOC of the package
    /// it was just installed from describes it, reading nothing: each file of `tables` (path below
    /// the version folder, chunk table) cut with the sizes most of them were, at the offsets its
    /// table gives, and who it is on disk now; and each file `carried` names with the chunks its
    /// previous index has for it: a file the update reused holds the same bytes. So the next
    /// delta from this version cuts only files neither describes.
    /// Never fails an install: an index not kept is only cut at the next delta.
    package static func seed(_ product: ProductFolder, version: String, tables: [(path: String, table: ChunkTable)],
                             carried: Carried? = nil, now: Int64?) {
        let previous = carried?.previous
        var votes: [(parameters: ChunkParameters, count: Int)] = []
        for (_, table) in tables {
            if let at = votes.firstIndex(where: { $0.parameters == table.parameters }) { votes[at].count += 1 } else { votes.append((table.parameters, 1)) }
        }
        guard let parameters = votes.max(by: { $0.count < $1.count })?.parameters ?? previous?.parameters else { return }
        let folder = openat(product.descriptor, version, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard folder >= 0 else { return }
        defer { close(folder) }
        var index = ChunkIndex(version: version, parameters: parameters)
        var added: [Entry] = []
        var budget = memoryLimit
        /// Adds the file `path` with `chunks` (digest and length, in order from its start) when
        /// they add up to the file on disk.
        func add(_ path: String, _ chunks: [(digest: ChunkDigest, offset: Int64, length: UInt32)], size: Int64) {
            var info = stat()
            guard PathSafety.componentsAreNames(path), fstatat(folder, path, &info, AT_SYMLINK_NOFOLLOW) == 0,
                  info.st_mode & S_IFMT == S_IFREG, Int64(info.st_size) == size else { return }
            let cost = chunks.count * entryBytes + MemoryLayout<File>.stride + path.utf8.count
            guard cost <= budget else { return }
            budget -= cost
            let position = UInt32(index.files.count)
            index.files.append(File(path: path, identity: FileIdentity(info)))
            for chunk in chunks { added.append(Entry(digest: chunk.digest, offset: chunk.offset, file: position, length: chunk.length)) }
        }
        for (path, table) in tables where table.parameters == parameters {
            var seen = Set<ChunkDigest>()
            var chunks: [(digest: ChunkDigest, offset: Int64, length: UInt32)] = []
            var offset: Int64 = 0
            for position in 0..<table.count {
                let chunk = table.chunk(position)
                if seen.insert(chunk.digest).inserted { chunks.append((chunk.digest, offset, UInt32(chunk.size))) }
                offset += Int64(chunk.size)
            }
            add(path, chunks, size: offset)
        }
        if let carried, carried.previous.parameters == parameters, !carried.files.isEmpty {
            let previous = carried.previous
            var byFile = [[(digest: ChunkDigest, offset: Int64, length: UInt32)]](repeating: [], count: previous.files.count)
            for entry in previous.entries { byFile[Int(entry.file)].append((entry.digest, entry.offset, entry.length)) }
            var positions: [String: Int] = [:]
            for (position, file) in previous.files.enumerated() { positions[file.path] = position }
            let described = Set(index.files.map(\.path))
            for (path, from) in carried.files where !described.contains(path) {
                guard let position = positions[from] else { continue }
                add(path, byFile[position], size: previous.files[position].identity.size)
            }
        }
        guard !index.files.isEmpty else { return }
        index.settle(adding: added)
        index.changed = true
        index.writeIfChanged(product, now: now)
    }

    // MARK: - The file beside the version folder

    /// The index's file beside each version folder.
    package static let beside = BesideVersion(prefix: ".chunk-index-")
    private static let magic = Array("pkgtool-chunk-index 1\n".utf8)
    /// A kept index larger than this is not read (its entries would not fit in `memoryLimit`).
    private static let largestFile = 2 * memoryLimit

    /// The index's name for version folder `version`.
    package static func fileName(_ version: String) -> String { beside.fileName(version) }

    /// The kept index of version folder `version` in `product` when it was cut with `parameters`;
    /// nil when there is none, it was cut with other sizes, or it does not read whole (a damaged
    /// index is no index).
    package static func read(_ product: ProductFolder, version: String, parameters: ChunkParameters) -> ChunkIndex? {
        let fd = openat(product.descriptor, fileName(version), O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size <= largestFile else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        guard bytes.withUnsafeMutableBytes({ readFully(fd, $0, at: 0) }) == bytes.count else { return nil }
        return bytes.withUnsafeBytes { parse($0, version: version, parameters: parameters) }
    }

    /// The index a kept file's `bytes` hold: the magic line, the sizes, each file (path, identity,
    /// chunks), and the sha256 of everything before; nil for anything else or other sizes.
    static func parse(_ bytes: UnsafeRawBufferPointer, version: String, parameters: ChunkParameters) -> ChunkIndex? {
        guard bytes.count >= magic.count + 32 else { return nil }
        let body = UnsafeRawBufferPointer(rebasing: bytes[..<(bytes.count - 32)])
        guard Array(SHA256.hash(data: body)) == Array(bytes[(bytes.count - 32)...]), Array(body.prefix(magic.count)) == magic else { return nil }
        var reader = BinaryReader(body, at: magic.count)
        guard let minimum = reader.u64(), let average = reader.u64(), let maximum = reader.u64(),
              ChunkParameters(minimumSize: Int(clamping: minimum), averageSize: Int(clamping: average), maximumSize: Int(clamping: maximum)) == parameters,
              let fileCount = reader.u32() else { return nil }
        var index = ChunkIndex(version: version, parameters: parameters)
        for position in 0..<fileCount {
            guard let pathLength = reader.u32(), let path = reader.bytes(Int(pathLength)),
                  let device = reader.u64(), let inode = reader.u64(), let mode = reader.u32(), let size = reader.u64(),
                  let modified = reader.u64(), let changed = reader.u64(), let count = reader.u32(),
                  reader.remaining >= Int(count) * 28 else { return nil }
            index.files.append(File(path: String(decoding: path, as: UTF8.self),
                                    identity: FileIdentity(device: device, inode: inode, mode: mode, size: Int64(bitPattern: size),
                                                           modified: Int64(bitPattern: modified), changed: Int64(bitPattern: changed))))
            for _ in 0..<count {
                guard let high = reader.u64(), let low = reader.u64(), let offset = reader.u64(), let length = reader.u32() else { return nil }
                index.entries.append(Entry(digest: ChunkDigest(high: high, low: low), offset: Int64(bitPattern: offset), file: position, length: length))
            }
        }
        guard reader.remaining == 0 else { return nil }
        index.settle(adding: [])
        return index
    }

    /// Keeps the index beside its version folder when it changed, leaving out files whose times are
    /// within `StatCache.racyMargin` of `now` (an edit in the same clock tick would not show);
    /// never fails a sync: an index that cannot be written is only cut again next time.
    package func writeIfChanged(_ product: ProductFolder, now: Int64? = nil) {
        guard changed else { return }
        let written = now ?? Int64(Date().timeIntervalSince1970 * 1e9)
        var byFile = [[Entry]](repeating: [], count: files.count)
        for entry in entries { byFile[Int(entry.file)].append(entry) }
        var bytes = Self.magic
        func put<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { bytes += $0 } }
        put(UInt64(parameters.minimumSize)); put(UInt64(parameters.averageSize)); put(UInt64(parameters.maximumSize))
        let trusted = files.indices.filter {
            files[$0].identity.changed < written - StatCache.racyMargin && files[$0].identity.modified < written - StatCache.racyMargin
        }
        put(UInt32(trusted.count))
        for position in trusted {
            let file = files[position]
            put(UInt32(file.path.utf8.count)); bytes += file.path.utf8
            put(file.identity.device); put(file.identity.inode); put(file.identity.mode); put(UInt64(bitPattern: file.identity.size))
            put(UInt64(bitPattern: file.identity.modified)); put(UInt64(bitPattern: file.identity.changed))
            put(UInt32(byFile[position].count))
            for entry in byFile[position].sorted(by: { $0.offset < $1.offset }) {
                put(entry.digest.high); put(entry.digest.low); put(UInt64(bitPattern: entry.offset)); put(entry.length)
            }
        }
        bytes += SHA256.hash(data: bytes)
        let name = Self.fileName(version), temporary = name + ".tmp-" + randomSuffix()
        let output = openat(product.descriptor, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard output >= 0 else { return }
        let complete = bytes.withUnsafeBytes { writeFully(output, $0) }
        close(output)
        guard complete, (try? product.rename(temporary, to: name)) != nil else {
            try? product.remove(temporary)
            return
        }
    }
}

/// Little-endian integers read in order from a kept file's bytes, never past their end.
private struct BinaryReader {
    private let bytes: UnsafeRawBufferPointer
    private var position: Int

    /// A reader of `bytes` from `position` on.
    init(_ bytes: UnsafeRawBufferPointer, at position: Int) {
        (self.bytes, self.position) = (bytes, position)
    }

    /// Bytes not read yet.
    var remaining: Int { bytes.count - position }

    /// The next 8 bytes as an integer; nil past the end.
    mutating func u64() -> UInt64? { integer() }
    /// The next 4 bytes as an integer; nil past the end.
    mutating func u32() -> UInt32? { integer() }

    /// The next integer of `T`'s size; nil past the end.
    private mutating func integer<T: FixedWidthInteger>() -> T? {
        guard remaining >= MemoryLayout<T>.size else { return nil }
        defer { position += MemoryLayout<T>.size }
        return T(littleEndian: bytes.loadUnaligned(fromByteOffset: position, as: T.self))
    }

    /// The next `count` bytes.
    mutating func bytes(_ count: Int) -> UnsafeRawBufferPointer? {
        guard count >= 0, remaining >= count else { return nil }
        defer { position += count }
        return UnsafeRawBufferPointer(rebasing: bytes[position ..< position + count])
    }
}
