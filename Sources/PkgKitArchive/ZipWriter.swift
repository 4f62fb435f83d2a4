import Crypto
internal import CArchive
import Foundation
import PkgKit

/// Writes the package tree as a zip (the form the store delivers to a device) through
/// libarchive, with every entry made deterministic: fixed times, owners and modes.
struct ZipWriter {
    var options: WriteOptions
    /// Zip's clock starts in 1980: earlier timestamps become 1980-01-01 00:00:00 UTC.
    static let zipEpoch: Int64 = 315_532_800

    /// Set once per process: changing the environment while other threads read it is unsafe.
    private static let utcClock: Void = {
        setenv("TZ", "UTC0", 1)
        tzset()
    }()

    /// What libarchive's write callback needs: where bytes go, and the first failure there.
    final class Context {
        let write: (UnsafeRawBufferPointer) throws -> Void
        var error: Error?
        init(write: @escaping (UnsafeRawBufferPointer) throws -> Void) { self.write = write }
    }

    /// Writes `items` as a zip, handing the archive's bytes to `write` in order.
    func write(_ items: [SourceItem], to write: (UnsafeRawBufferPointer) throws -> Void, progress: ((Int64) -> Void)? = nil) throws -> [WrittenFile] {
        // libarchive turns times into DOS dates with localtime(): pin the zone so the bytes
        // do not depend on the machine's.
        _ = Self.utcClock
        guard let archive = archive_write_new() else { throw WriteError.compression("libarchive: out of memory") }
        defer { archive_write_free(archive) }
        try check(archive, archive_write_set_format_zip(archive))
        _ = archive_write_set_bytes_in_last_block(archive, 1)
        // libarchive takes the zip method once per archive, before it opens: `auto` and `zlib`
        // both deflate every file here (a stored-per-file choice is a xar feature).
        let deflate = options.compression != .none
        _ = archive_write_set_format_option(archive, "zip", "compression", deflate ? "deflate" : "store")
        // Any level also selects deflate in libarchive, so it is set only when deflating.
        if deflate { _ = archive_write_set_format_option(archive, "zip", "compression-level", String(options.level)) }
        // The callback runs only while `write` is in scope: before this function returns.
        return try withoutActuallyEscaping(write) { write in
        let context = Context(write: write)
        let opaque = Unmanaged.passUnretained(context).toOpaque()
        try check(archive, archive_write_open2(archive, opaque, nil, { _, context, bytes, count in
            let context = Unmanaged<ZipWriter.Context>.fromOpaque(context!).takeUnretainedValue()
            do {
                try context.write(UnsafeRawBufferPointer(start: bytes, count: count))
                return count
            } catch {
                context.error = error
                return -1
            }
        }, nil, nil))
        let time = max(options.timestamp, Self.zipEpoch)
        var files: [WrittenFile] = []
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        var done: Int64 = 0
        for item in items {
            guard let entry = archive_entry_new() else { throw WriteError.compression("libarchive: out of memory") }
            defer { archive_entry_free(entry) }
            archive_entry_copy_pathname(entry, item.path.string + (item.kind == .directory ? "/" : ""))
            archive_entry_set_mtime(entry, time_t(time), 0)
            archive_entry_set_uid(entry, 0)
            archive_entry_set_gid(entry, 0)
            switch item.kind {
            case .directory:
                archive_entry_set_filetype(entry, CArchive_AE_IFDIR)
                archive_entry_set_perm(entry, 0o755)
                try check(archive, archive_write_header(archive, entry), context)
            case .symlink:
                archive_entry_set_filetype(entry, CArchive_AE_IFLNK)
                archive_entry_set_perm(entry, 0o755)
                archive_entry_copy_symlink(entry, String(decoding: item.linkTarget ?? [], as: UTF8.self))
                try check(archive, archive_write_header(archive, entry), context)
            default:
                archive_entry_set_filetype(entry, CArchive_AE_IFREG)
                archive_entry_set_perm(entry, 0o644)
                archive_entry_set_size(entry, item.size)
                let reader = FolderReader(items: [item])
                _ = try reader.nextEntry()
                var count = try reader.readData(into: buffer)
                try check(archive, archive_write_header(archive, entry), context)
                var sha1 = Insecure.SHA1()
                var size: Int64 = 0
                while count > 0 {
                    let chunk = UnsafeRawBufferPointer(rebasing: buffer[0..<count])
                    sha1.update(bufferPointer: chunk)
                    size += Int64(count)
                    guard size <= item.size else { throw WriteError.sourceChanged(path: item.path.description) }
                    guard archive_write_data(archive, chunk.baseAddress, count) == count else { try check(archive, ARCHIVE_FATAL, context); break }
                    count = try reader.readData(into: buffer)
                }
                guard size == item.size else { throw WriteError.sourceChanged(path: item.path.description) }
                done += size
                progress?(done)
                files.append(WrittenFile(path: item.path.string, size: size, storedSize: size, encoding: deflate ? .zlib : .stored, sha1: sha1.finalize().hexString))
            }
        }
        try check(archive, archive_write_close(archive), context)
        return files
        }
    }

    private func check(_ archive: OpaquePointer, _ status: Int32, _ context: Context? = nil) throws {
        if let error = context?.error { throw error }
        guard status >= ARCHIVE_OK else {
            throw WriteError.compression("libarchive zip writer: " + (archive_error_string(archive).map { String(cString: $0) } ?? "error \(status)"))
        }
    }
}
