import Crypto
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Computes the sha256 of a file while it is being written, on its own thread: the writer says
/// how far it has written, the hasher reads that much back (from the page cache) and hashes it.
/// The package's digest then costs no time on the writing thread.
// Unchecked: the mutable state (`written`, `closed`, `result`) is touched only under `condition`.
final class BackgroundHasher: @unchecked Sendable {
    private let descriptor: Int32
    private let path: String
    private let condition = NSCondition()
    private var written: Int64 = 0
    private var closed = false
    private var result: Result<String, Error>?

    /// Starts hashing `descriptor`, which must be open for reading.
    init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
        Thread.detachNewThread { [self] in run() }
    }

    /// The file now holds `position` bytes.
    func advance(to position: Int64) {
        condition.lock()
        written = position
        condition.signal()
        condition.unlock()
    }

    /// Waits for the last bytes and returns the digest, lowercase hex.
    func finish() throws -> String {
        condition.lock()
        defer { condition.unlock() }
        closed = true
        condition.broadcast()
        while result == nil { condition.wait() }
        return try result!.get()
    }

    private func run() {
        var sha256 = SHA256()
        var hashed: Int64 = 0
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            condition.lock()
            while hashed == written && !closed { condition.wait() }
            let end = written, done = closed && hashed == written
            condition.unlock()
            if done { break }
            while hashed < end {
                let wanted = Int(min(Int64(buffer.count), end - hashed))
                let count = readFully(descriptor, UnsafeMutableRawBufferPointer(rebasing: buffer[0..<wanted]), at: hashed)
                guard count > 0 else {
                    deliver(.failure(WriteError.io(path: path, count < 0 ? errnoText() : "the package ended early while hashing")))
                    return
                }
                sha256.update(bufferPointer: UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
                hashed += Int64(count)
            }
        }
        deliver(.success(sha256.finalize().hexString))
    }

    private func deliver(_ outcome: Result<String, Error>) {
        condition.lock()
        result = outcome
        condition.broadcast()
        condition.unlock()
    }
}
