import Crypto
import Foundation
import PkgKitSupport
import PkgKitFormat
internal import CSyscalls

/// What an install knew of each file it wrote, kept beside the version folder as
/// `DIR/<id>/.index-<version>`: the file's sha1 (from the package's verified TOC) and who the file
/// was on disk right after the install (device, inode, mode, size, and mtime and ctime in
/// nanoseconds). A delta sync takes a file's sha1 from here instead of reading it again, as git's
/// index does, but only while the file is still exactly who it was: writing a file changes its
/// ctime, which no one can set back, so an edited file never matches and is read and hashed.
///
/// Two guards keep that promise: an entry whose ctime or mtime falls within `racyMargin` of the
/// moment the cache is written is left out (file times come from a clock that advances in ticks,
/// and an edit in the same tick as the install could leave them unchanged: git's "racy" entries),
/// and the whole file carries its own sha256, so a cache damaged by a crash is ignored whole.
package struct StatCache: Sendable {
    /// One file's sha1, first bytes' verdict, and identity.
    package struct Entry: Sendable, Equatable {
        package var sha1: SHA1Value
        package var executable: ExecutableFormat?
        package var identity: FileIdentity
    }

    /// Entries by path below the version folder.
    package var entries: [String: Entry] = [:]

    /// How close to the cache's writing a file's times may be and the file still be trusted:
    /// twice the coarsest tick of the clock file times come from (a jiffy: 1–10 ms).
    package static let racyMargin: Int64 = 20_000_000

    private static let magic = "pkgtool-stat-cache 1"

    /// The cache's file beside each version folder.
    package static let beside = BesideVersion(prefix: ".index-")

    /// The cache's name for version folder `version`.
    package static func fileName(_ version: String) -> String { beside.fileName(version) }

    /// The entry for `path` when `identity` is still the file's.
    package func entry(_ path: String, matching identity: FileIdentity) -> Entry? {
        guard let entry = entries[path], entry.identity == identity else { return nil }
        return entry
    }

    /// The cache of version folder `version` in `product`; nil when there is none or it does not
    /// read whole (every defect, a damaged file included, means "no cache").
    package static func read(_ product: ProductFolder, version: String) -> StatCache? {
        guard let data = FileManager.default.contents(atPath: product.path(fileName(version))) else { return nil }
        return data.withUnsafeBytes { parse(UnsafeRawBufferPointer($0)) }
    }

    /// The cache whose file holds `bytes`: the magic line, one line per file (nine tab-separated
    /// fields, the path last), and `end <sha256 of everything before>`; nil for anything else.
    /// Read as bytes: a cache of 100,000 files is parsed in a few milliseconds.
    package static func parse(_ bytes: UnsafeRawBufferPointer) -> StatCache? {
        let newline = UInt8(ascii: "\n"), tab = UInt8(ascii: "\t")
        let trailerStart = bytes.dropLast().lastIndex(of: newline).map { $0 + 1 } ?? 0
        let trailer = String(decoding: bytes[trailerStart...], as: UTF8.self)
        let body = UnsafeRawBufferPointer(rebasing: bytes[..<trailerStart])
        guard trailer == "end " + SHA256.hash(data: body).hexString + "\n" else { return nil }
        var lines = body.split(separator: newline, omittingEmptySubsequences: false)
        guard lines.first.map({ String(decoding: $0, as: UTF8.self) }) == magic, lines.last?.isEmpty == true else { return nil }
        lines.removeLast()
        func number<T: FixedWidthInteger>(_ field: Slice<UnsafeRawBufferPointer>) -> T? {
            var value: T = 0
            var negative = false
            for (index, byte) in field.enumerated() {
                if index == 0 && byte == UInt8(ascii: "-") && T.isSigned { negative = true; continue }
                guard byte >= 48 && byte <= 57 else { return nil }
                let (times, overflow1) = value.multipliedReportingOverflow(by: 10)
                let (sum, overflow2) = times.addingReportingOverflow(T(byte - 48))
                guard !overflow1, !overflow2 else { return nil }
                value = sum
            }
            return field.isEmpty ? nil : (negative ? 0 - value : value)
        }
        var cache = StatCache()
        cache.entries.reserveCapacity(lines.count - 1)
        // The nine fields of a line, found in place: splitting each line into an array of its
        // fields was a third of reading the cache.
        var fields = [Slice<UnsafeRawBufferPointer>](repeating: body[0..<0], count: 9)
        for line in lines.dropFirst() {
            var start = line.startIndex, count = 0
            while count < 8, let tabIndex = line[start...].firstIndex(of: tab) {
                fields[count] = line[start..<tabIndex]
                count += 1
                start = tabIndex + 1
            }
            fields[count] = line[start...]
            guard count == 8, let sha1 = SHA1Value(hexBytes: UnsafeRawBufferPointer(rebasing: fields[0])), let device: UInt64 = number(fields[2]), let inode: UInt64 = number(fields[3]),
                  let mode: UInt32 = number(fields[4]), let size: Int64 = number(fields[5]), let modified: Int64 = number(fields[6]),
                  let changed: Int64 = number(fields[7]) else { return nil }
            let verdict = String(decoding: fields[1], as: UTF8.self)
            cache.entries[String(decoding: fields[8], as: UTF8.self)] = Entry(
                sha1: sha1, executable: verdict == "-" ? nil : ExecutableFormat(rawValue: verdict),
                identity: FileIdentity(device: device, inode: inode, mode: mode, size: size, modified: modified, changed: changed))
        }
        return cache
    }

    /// One file the cache is to record: its path in the version folder, its verified sha1 and its
    /// first bytes' verdict.
    package typealias File = (path: String, sha1: SHA1Value, executable: ExecutableFormat?)

    /// Writes the cache of version folder `version` in `product` for `files`, each with who it is
    /// on disk now. A file that is not a regular file, or whose times are within `racyMargin` of
    /// `now` (nanoseconds since 1970; the clock's, unless a test says), is left out. Files are taken
    /// `batchSize` at a time and each batch is stat'ed and spelled out on every core, in order, so
    /// that a package of 100,000 files costs no more memory than one of ten and the last step of an
    /// install does not stat them one by one. Never fails an install: a cache that cannot be written
    /// is only a slower next delta.
    package static func write(_ product: ProductFolder, version: String, files: some Sequence<File>, now: Int64? = nil) {
        let written = now ?? Int64(Date().timeIntervalSince1970 * 1e9)
        let folder = openat(product.descriptor, version, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard folder >= 0 else { return }
        defer { close(folder) }
        let name = fileName(version), temporary = name + ".tmp-" + randomSuffix()
        let output = openat(product.descriptor, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard output >= 0 else { return }
        var out = CacheFileOutput(output)
        out.append(magic)
        let jobs = min(maxJobs, ProcessInfo.processInfo.activeProcessorCount)
        var iterator = files.makeIterator()
        var batch: [File] = []
        batch.reserveCapacity(batchSize)
        var more = true
        while more {
            batch.removeAll(keepingCapacity: true)
            while batch.count < batchSize, let file = iterator.next() { batch.append(file) }
            more = batch.count == batchSize
            let chunks = (batch.count + chunkSize - 1) / chunkSize
            let taken = batch
            try? OrderedWorkPool.run(count: chunks, jobs: jobs, window: 2 * jobs, work: { chunk in
                lines(taken[chunk * chunkSize ..< min(taken.count, (chunk + 1) * chunkSize)], in: folder, writtenAt: written)
            }, consume: { _, bytes in
                out.append(raw: bytes)
            })
        }
        let complete = out.finish()
        close(output)
        guard complete, (try? product.rename(temporary, to: name)) != nil else {
            try? product.remove(temporary)
            return
        }
    }

    /// Files gathered from the install's facts at once, and how many of them one thread spells out.
    package static let batchSize = 4096
    package static let chunkSize = 512
    /// Threads that stat a batch (at most).
    static let maxJobs = 4

    /// The cache lines of `files` (each stat'ed in the version folder `folder`), in their order.
    private static func lines(_ files: ArraySlice<File>, in folder: Int32, writtenAt written: Int64) -> [UInt8] {
        var line = LineBuilder()
        var info = stat()
        // Files come folder by folder: each is stat'ed by its name in its open folder, not walked
        // to from the version folder again.
        var parent: (path: Substring, descriptor: Int32)?
        defer { if let parent, parent.descriptor != folder, parent.descriptor >= 0 { close(parent.descriptor) } }
        for file in files {
            let slash = file.path.lastIndex(of: "/")
            let folderPath = slash.map { file.path[..<$0] } ?? ""
            if parent?.path != folderPath {
                if let parent, parent.descriptor != folder, parent.descriptor >= 0 { close(parent.descriptor) }
                let opened = folderPath.isEmpty ? folder
                    : openat(folder, String(folderPath), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                parent = (folderPath, opened)
            }
            let name = slash.map { String(file.path[file.path.index(after: $0)...]) } ?? file.path
            guard let descriptor = parent?.descriptor, descriptor >= 0,
                  fstatat(descriptor, name, &info, AT_SYMLINK_NOFOLLOW) == 0, info.st_mode & S_IFMT == S_IFREG else { continue }
            let identity = FileIdentity(info)
            guard identity.changed < written - racyMargin, identity.modified < written - racyMargin else { continue }
            line.append(hex: file.sha1)
            line.append(file.executable?.rawValue ?? "-", then: "\t")
            line.append(unsigned: identity.device)
            line.append(unsigned: identity.inode)
            line.append(unsigned: UInt64(identity.mode))
            line.append(signed: identity.size)
            line.append(signed: identity.modified)
            line.append(signed: identity.changed)
            line.append(file.path, then: "\n")
        }
        return line.bytes
    }

    /// Cache lines spelled straight into bytes: formatting eight Strings per file was most of
    /// writing the cache of a 10,000-file delta.
    private struct LineBuilder {
        var bytes: [UInt8] = []

        init() { bytes.reserveCapacity(StatCache.chunkSize * 160) }

        mutating func append(_ text: String, then separator: Unicode.Scalar) {
            bytes.append(contentsOf: text.utf8)
            bytes.append(UInt8(ascii: separator))
        }

        /// A digest in lowercase hex and a tab.
        mutating func append(hex digest: SHA1Value) {
            digest.appendHex(to: &bytes)
            bytes.append(UInt8(ascii: "\t"))
        }

        /// `number` in decimal and a tab.
        mutating func append(unsigned number: UInt64) {
            var count = 1, rest = number
            while rest >= 10 {
                rest /= 10
                count += 1
            }
            let start = bytes.count
            bytes.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: count))
            var value = number
            for index in stride(from: start + count - 1, through: start, by: -1) {
                bytes[index] = UInt8(ascii: "0") + UInt8(value % 10)
                value /= 10
            }
            bytes.append(UInt8(ascii: "\t"))
        }

        mutating func append(signed number: Int64) {
            if number < 0 { bytes.append(UInt8(ascii: "-")) }
            append(unsigned: number.magnitude)
        }
    }

    /// The cache file as it is written: bytes gathered in a buffer, hashed and written out each
    /// time it fills, and the `end <sha256>` trailer last.
    private struct CacheFileOutput {
        private let descriptor: Int32
        private var buffer: [UInt8] = []
        private var hasher = SHA256()
        private var failed = false
        private static let flushAt = 256 << 10

        init(_ descriptor: Int32) {
            self.descriptor = descriptor
            buffer.reserveCapacity(Self.flushAt + 4096)
        }

        mutating func append(_ text: String) {
            append(raw: Array(text.utf8) + [UInt8(ascii: "\n")])
        }

        mutating func append(raw bytes: [UInt8]) {
            buffer.append(contentsOf: bytes)
            if buffer.count >= Self.flushAt { flush() }
        }

        private mutating func flush(hashing: Bool = true) {
            if hashing { hasher.update(data: buffer) }
            failed = failed || !buffer.withUnsafeBytes { writeFully(descriptor, $0) }
            buffer.removeAll(keepingCapacity: true)
        }

        /// Writes what is left and the trailer; false if any write failed.
        mutating func finish() -> Bool {
            flush()
            buffer.append(contentsOf: ("end " + hasher.finalize().hexString + "\n").utf8)
            flush(hashing: false)
            return !failed
        }
    }
}
