internal import CArchive
import Foundation
import PkgKit

/// Reads xar, zip, tar and cpio archives through libarchive, detected by content.
///
/// libarchive 3.6.2 has xar traps this class absorbs (see docs/format.md): a checksum
/// failure arrives as `ARCHIVE_FAILED` only at an entry's end; an OK block of zero bytes
/// before the declared size means a broken stream, not progress; and the offset it reports
/// is wrong at an entry's end, so bytes are counted here.
final class LibArchiveReader: PackageReader {
    public private(set) var format: PackageFormat = .tar
    private let handle: OpaquePointer
    private var entryPointer: OpaquePointer?
    private var currentPath: String?
    private var currentRawPath: String?
    private var declared: Int64?
    private var delivered: Int64 = 0
    private var pending: UnsafeRawBufferPointer?
    private var entryEnded = false
    private let source: Source

    /// Where the archive bytes come from.
    enum Source {
        case file(String)
        case callback(ArchiveByteSource)
    }

    /// Opens the archive file at `path`.
    public convenience init(path: String) throws {
        try self.init(source: .file(path))
    }

    init(source: Source) throws {
        LibXMLSetup.ensure()
        guard let handle = archive_read_new() else { throw ReadError.io(path: "", "out of memory") }
        self.handle = handle
        self.source = source
        archive_read_support_filter_all(handle)
        archive_read_support_format_xar(handle)
        archive_read_support_format_zip(handle)
        archive_read_support_format_tar(handle)
        archive_read_support_format_cpio(handle)
        let status: Int32
        switch source {
        case .file(let path):
            status = Self.withUTF8Locale { archive_read_open_filename(handle, path, 1 << 20) }
        case .callback(let byteSource):
            let context = Unmanaged.passUnretained(byteSource).toOpaque()
            status = Self.withUTF8Locale {
                archive_read_open(handle, context, nil, { _, context, buffer in
                    let source = Unmanaged<ArchiveByteSource>.fromOpaque(context!).takeUnretainedValue()
                    return source.next(buffer!)
                }, nil)
            }
        }
        if status != ARCHIVE_OK {
            let message = Self.message(handle)
            // Every stored property is set, so deinit runs and frees the handle: freeing it
            // here too was a double free (a crash on every unreadable input).
            throw ReadError.unreadable(path: nil, "not a readable archive: \(message)")
        }
    }

    deinit { archive_read_free(handle) }

    /// The archive's size, for progress; 0 when read from a stream.
    private lazy var inputSize: Int64 = {
        guard case .file(let path) = source else { return 0 }
        var info = stat()
        return stat(path, &info) == 0 ? Int64(info.st_size) : 0
    }()

    public var progress: (done: Int64, total: Int64) {
        (archive_filter_bytes(handle, -1), inputSize)
    }

    /// A UTF-8 character-type locale for libarchive's name conversions. libarchive turns a
    /// xar's (UTF-8) names into the current locale's charset; in the C locale every
    /// non-ASCII name then fails and comes back NULL. pkgtool never calls setlocale, so each
    /// libarchive call runs with this locale set for its thread only (`uselocale`).
    // A locale_t is an opaque handle, made once and never changed or freed: safe to share.
    nonisolated(unsafe) private static let utf8Locale: locale_t? = {
        for name in ["C.UTF-8", "C.utf8", "en_US.UTF-8", "UTF-8"] {
            if let locale = newlocale(LC_CTYPE_MASK, name, nil) { return locale }
        }
        return nil
    }()

    private static func withUTF8Locale<T>(_ body: () throws -> T) rethrows -> T {
        guard let locale = utf8Locale else { return try body() }
        let previous = uselocale(locale)
        defer { uselocale(previous) }
        return try body()
    }

    public func nextEntry() throws -> ArchiveEntry? {
        try Self.withUTF8Locale { try nextEntryInLocale() }
    }

    private func nextEntryInLocale() throws -> ArchiveEntry? {
        var entry: OpaquePointer?
        let status = archive_read_next_header(handle, &entry)
        if status == ARCHIVE_EOF { return nil }
        if status < ARCHIVE_WARN || entry == nil {
            throw Self.failure(Self.message(handle), path: nil)
        }
        updateFormat()
        entryPointer = entry
        pending = nil
        entryEnded = false
        delivered = 0
        // Without setlocale the C locale cannot turn a xar's UTF-8 names into multibyte text, so
        // the plain accessor returns NULL for any non-ASCII name: fall back to the UTF-8 form.
        guard let raw = archive_entry_pathname(entry) ?? archive_entry_pathname_utf8(entry) else {
            throw ReadError.unreadable(path: nil, "an entry has no name")
        }
        let rawBytes = Array(UnsafeBufferPointer(start: UnsafeRawPointer(raw).assumingMemoryBound(to: UInt8.self), count: strlen(raw)))
        guard rawBytes.count <= 4 * PackageLimits.maxPathBytes else {
            throw ReadError.unreadable(path: nil, "an entry name is \(rawBytes.count) bytes long")
        }
        let path = ArchivePath(raw: rawBytes)
        currentPath = path.description
        currentRawPath = path.string
        let type = UInt32(archive_entry_filetype(entry))
        let mode = UInt32(archive_entry_perm(entry))
        declared = archive_entry_size_is_set(entry) != 0 ? archive_entry_size(entry) : nil
        if let hardlink = archive_entry_hardlink(entry) ?? archive_entry_hardlink_utf8(entry) {
            let target = Array(UnsafeBufferPointer(start: UnsafeRawPointer(hardlink).assumingMemoryBound(to: UInt8.self), count: strlen(hardlink)))
            return ArchiveEntry(path: path, kind: .hardlink, mode: mode, hardlinkTarget: ArchivePath(raw: target))
        }
        let kind: EntryKind
        switch type {
        case CArchive_AE_IFREG: kind = .file
        case CArchive_AE_IFDIR: kind = .directory
        case CArchive_AE_IFLNK: kind = .symlink
        case CArchive_AE_IFCHR: kind = .characterDevice
        case CArchive_AE_IFBLK: kind = .blockDevice
        case CArchive_AE_IFIFO: kind = .fifo
        case CArchive_AE_IFSOCK: kind = .socket
        default: kind = .file
        }
        var target: [UInt8]?
        if kind == .symlink, let link = archive_entry_symlink(entry) ?? archive_entry_symlink_utf8(entry) {
            target = Array(UnsafeBufferPointer(start: UnsafeRawPointer(link).assumingMemoryBound(to: UInt8.self), count: strlen(link)))
        }
        return ArchiveEntry(path: path, kind: kind, mode: mode, declaredSize: kind == .file ? declared : nil, linkTarget: target)
    }

    public func readData(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        try Self.withUTF8Locale { try readDataInLocale(into: buffer) }
    }

    private func readDataInLocale(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        var zeroBlocks = 0
        while true {
            if let block = pending, !block.isEmpty {
                let count = min(block.count, buffer.count)
                buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: block[0..<count]))
                pending = count == block.count ? nil : UnsafeRawBufferPointer(rebasing: block[count...])
                delivered += Int64(count)
                return count
            }
            if entryEnded { return 0 }
            var pointer: UnsafeRawPointer?
            var size = 0
            var offset: Int64 = 0
            let status = archive_read_data_block(handle, &pointer, &size, &offset)
            if status == ARCHIVE_EOF {
                entryEnded = true
                return 0
            }
            if status < ARCHIVE_OK {
                entryEnded = true
                let message = Self.message(handle)
                if message.lowercased().contains("truncated"), case .duplicateEntry = streamEndedEarly() {
                    throw streamEndedEarly()
                }
                throw Self.failure(message, path: currentPath)
            }
            if size == 0 {
                // libarchive 3.6.2's xar reader spins on OK + 0 bytes when a zlib stream ends
                // before its declared length: treat it as the corruption it is.
                zeroBlocks += 1
                if zeroBlocks > 16 {
                    entryEnded = true
                    throw streamEndedEarly()
                }
                continue
            }
            if let declared, delivered + Int64(size) > declared, format != .zip {
                entryEnded = true
                throw ReadError.unreadable(path: currentPath, "the data is longer than the \(declared) bytes its header declares")
            }
            pending = UnsafeRawBufferPointer(start: pointer, count: size)
        }
    }

    /// A xar entry's zlib data ended before its declared length: two copies of one path merged by
    /// libarchive's writer, or corruption.
    private func streamEndedEarly() -> ReadError {
        if format == .xar, case .file(let archive) = source, let path = currentRawPath,
           let copies = XarMergedCopies.copies(archive: archive, path: path) {
            return XarMergedCopies.failure(path: currentPath, copies: copies)
        }
        return .unreadable(path: currentPath, "the compressed data ends before its declared length: the package is corrupt; rebuild it")
    }

    private func updateFormat() {
        let code = archive_format(handle) & ARCHIVE_FORMAT_BASE_MASK
        switch code {
        case ARCHIVE_FORMAT_XAR: format = .xar
        case ARCHIVE_FORMAT_ZIP: format = .zip
        default: format = .tar
        }
    }

    private static func message(_ handle: OpaquePointer) -> String {
        // libarchive's texts may end in (or hold) newlines; a diagnostic is one line.
        let text = archive_error_string(handle).map { String(cString: $0) } ?? "unknown error"
        return text.split(whereSeparator: \.isNewline).joined(separator: " ")
    }

    /// libarchive reports checksum failures only through its message text.
    private static func failure(_ message: String, path: String?) -> ReadError {
        let lower = message.lowercased()
        if lower.contains("sumcheck") || lower.contains("crc") || lower.contains("checksum") {
            return .checksumMismatch(path: path, "checksum error (\(message))")
        }
        return .unreadable(path: path, message)
    }
}

/// Feeds bytes to a libarchive reader from another stream (the Payload inside a flat package).
final class ArchiveByteSource {
    private let produce: () throws -> UnsafeRawBufferPointer?
    private(set) var error: Error?

    init(produce: @escaping () throws -> UnsafeRawBufferPointer?) {
        self.produce = produce
    }

    fileprivate func next(_ buffer: UnsafeMutablePointer<UnsafeRawPointer?>) -> Int {
        do {
            guard let block = try produce(), !block.isEmpty else { return 0 }
            buffer.pointee = block.baseAddress
            return block.count
        } catch {
            self.error = error
            return -1
        }
    }
}
