import Crypto
import Foundation
import PkgKitSupport

/// A local copy of a package that holds only some of its byte ranges (the rest reads as zeros):
/// where a delta update puts the header, the TOC and the heap ranges it fetches. Written from the
/// transport's thread, one chunk at a time.
package final class SparseCopy: Sendable {
    /// Its path, for messages.
    package let path: String
    /// The open file, written and read through one call at a time.
    private let descriptor: LockedValue<Int32>

    /// Creates (or empties) `name` in `folder`, `size` bytes long and all holes.
    package init(folder: Int32, name: String, path: String, size: Int64) throws {
        self.path = path
        let descriptor = openat(folder, name, O_RDWR | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw DownloadError.io(path: path, "cannot create the delta file: \(errnoText())") }
        guard ftruncate(descriptor, off_t(size)) == 0 else {
            let message = errnoText()
            close(descriptor)
            throw DownloadError.io(path: path, "cannot size the delta file: \(message)")
        }
        self.descriptor = LockedValue(descriptor)
    }

    deinit { close(descriptor.withLock { $0 }) }

    /// Writes `chunk` at `offset`.
    package func write(_ chunk: Data, at offset: Int64) throws {
        try descriptor.withLock { descriptor in
            let ok = chunk.withUnsafeBytes { writeFully(descriptor, $0, at: offset) }
            guard ok else { throw DownloadError.io(path: path, "cannot write: \(errnoText())") }
        }
    }

    /// `count` bytes at `offset` (fewer at the end of the file).
    package func read(_ count: Int, at offset: Int64) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let got = try bytes.withUnsafeMutableBytes { try read(into: $0, at: offset) }
        return Array(bytes[0..<got])
    }

    /// Reads into `buffer` the bytes at `offset`; returns how many (fewer at the end of the file).
    package func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        try descriptor.withLock { descriptor in
            let got = readFully(descriptor, buffer, at: offset)
            guard got >= 0 else { throw DownloadError.io(path: path, errnoText()) }
            return got
        }
    }

    /// The sha256 of bytes `0 ..< count`, read back streaming.
    package func sha256(ofFirst count: Int64) throws -> String {
        var hasher = SHA256()
        var done: Int64 = 0
        while done < count {
            let chunk = try read(Int(min(1 << 20, count - done)), at: done)
            guard !chunk.isEmpty else { break }
            hasher.update(data: chunk)
            done += Int64(chunk.count)
        }
        return hasher.finalize().hexString
    }
}
