import Crypto
import Foundation
import PkgKitSupport

/// Computes the sha256 of a file while it is being written, on its own thread: the writer says
/// how far it has written, the hasher reads that much back (from the page cache) and hashes it.
/// The package's digest then costs no time on the writing thread.
package final class BackgroundHasher: Sendable {
    private let descriptor: Int32
    private let path: String
    /// What the writer and the hashing thread tell each other.
    private let state = ConditionLockedValue(State())

    private struct State {
        /// How many bytes the file holds.
        var written: Int64 = 0
        /// True once the writer is done.
        var closed = false
        /// The digest, or why there is none, once the hashing thread is done.
        var result: Result<String, any Error>?
        /// Ranges of the file whose sha1 must be a given digest (stored files copied without
        /// passing through this process), in file order.
        var checks: [Check] = []
    }

    private struct Check {
        var start: Int64
        var end: Int64
        var sha1: Insecure.SHA1Digest
        var failure: Error
    }

    /// Starts hashing `descriptor`, which must be open for reading.
    package init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
        Thread.detachNewThread { [self] in run() }
    }

    /// Asks for bytes `start ..< start + count` to be checked against `sha1` as they are hashed;
    /// a mismatch makes `finish` throw `failure`. Called before the file holds those bytes, in
    /// file order.
    package func expect(sha1: Insecure.SHA1Digest, start: Int64, count: Int64, failure: Error) {
        state.withLock { $0.checks.append(Check(start: start, end: start + count, sha1: sha1, failure: failure)) }
    }

    /// The file now holds `position` bytes.
    package func advance(to position: Int64) {
        state.withLock(thenWake: .one) { $0.written = position }
    }

    /// Waits for the last bytes and returns the digest, lowercase hex.
    package func finish() throws -> String {
        state.withLock(thenWake: .all) { $0.closed = true }
        return try state.withLock(waitingUntil: { $0.result != nil }) { $0.result! }.get()
    }

    private func run() {
        var sha256 = SHA256()
        var hashed: Int64 = 0
        // The check being hashed, and its running sha1.
        var check: Check?
        var sha1 = Insecure.SHA1()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let (end, done) = state.withLock(waitingUntil: { $0.written != hashed || $0.closed }) {
                ($0.written, $0.closed && hashed == $0.written)
            }
            if done { break }
            while hashed < end {
                let wanted = Int(min(Int64(buffer.count), end - hashed))
                let count = readFully(descriptor, UnsafeMutableRawBufferPointer(rebasing: buffer[0..<wanted]), at: hashed)
                guard count > 0 else {
                    deliver(.failure(WriteError.io(path: path, count < 0 ? errnoText() : "the package ended early while hashing")))
                    return
                }
                sha256.update(bufferPointer: UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
                // The same bytes serve the checks that fall in them.
                var at = hashed
                let chunkEnd = hashed + Int64(count)
                while at < chunkEnd {
                    if check == nil {
                        check = state.withLock { state in
                            !state.checks.isEmpty && state.checks[0].start < chunkEnd ? state.checks.removeFirst() : nil
                        }
                        guard check != nil else { break }
                        sha1 = Insecure.SHA1()
                    }
                    let from = max(at, check!.start), to = min(chunkEnd, check!.end)
                    if from < to {
                        sha1.update(bufferPointer: UnsafeRawBufferPointer(rebasing: buffer[Int(from - hashed)..<Int(to - hashed)]))
                    }
                    at = max(at, to)
                    if to == check!.end {
                        guard sha1.finalize() == check!.sha1 else {
                            deliver(.failure(check!.failure))
                            return
                        }
                        check = nil
                    }
                }
                hashed += Int64(count)
            }
        }
        deliver(.success(sha256.finalize().hexString))
    }

    private func deliver(_ outcome: Result<String, Error>) {
        state.withLock(thenWake: .all) { $0.result = outcome }
    }
}
