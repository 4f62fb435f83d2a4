import Crypto
import Foundation
#if os(Linux)
internal import CSyscalls
#endif
import PkgKitSupport
import PkgKitFormat
import PkgKitDiagnostics

/// A package's `.part`: the download writes it front to back, and the installer reads it at the
/// same time, as the `PackageBytes` of a package still arriving. A read waits until the bytes it
/// asks for are written, and throws once they never will be (`fail`). The sha256 is computed as
/// the bytes are written (a resumed prefix is read back and hashed first), and with the catalog's
/// `tocSHA256` the header and TOC are checked the moment they are complete, so that a package
/// whose TOC is not the catalog's is refused before its heap is read.
///
/// The file is locked (`flock`) while open, so two downloads of it never mix, and it is never
/// flushed to disk: every use checks its sha256 whole, so a `.part` that a crash left with lost
/// or stale blocks is refused (and deleted), never installed.
///
/// What the installer has read it will not read again: that part of the file is written out and
/// its pages handed back to the system (`release(_:of:)`), so that the version being staged
/// writes into pages the system already has instead of taking new ones for every byte, and a
/// large download never fills the page cache twice over. For the same reason a download that an
/// installer reads is kept at most `leadLimit` bytes ahead of it (`waitForRoom`): bytes that
/// arrive far ahead of the install each take a page of their own, and on a machine whose memory
/// costs the most the first time it is touched those pages cost more than the install saves by
/// having them early.
package final class PartFile: PackageBytes, @unchecked Sendable {
    // @unchecked: every mutable field is guarded by `condition`; the descriptor is only written
    // under it, and read with `pread` (safe from any thread).
    package let path: String
    /// The package's size, from the catalog.
    package let size: Int64
    /// The URL, for messages.
    package let url: String
    private let expectedSHA256: String
    private let expectedTOCSHA256: String?
    private let condition = NSCondition()
    private var descriptor: Int32
    private var written: Int64 = 0
    private var received: Int64 = 0
    private var keptPrefix: Int64 = 0
    private var hasher = SHA256()
    private var tocEnd: Int64?
    private var failure: (any Error)?
    private var verified = false
    /// The furthest byte any read reached, and how far pages were given back.
    private var readFrontier: Int64 = 0
    private var released: Int64 = 0
    /// The furthest byte any read asked for, answered or still waiting.
    private var wanted: Int64 = 0
    /// How far the download may run ahead of the reads (nil: as far as it likes).
    private var lead: Int64?
    /// The download, waiting for the reads to catch up.
    private var roomWaiters: [CheckedContinuation<Void, Never>] = []

    /// How far ahead of an installer reading it a download is let run. The `.part`'s pages in the
    /// page cache are about this lead, the release lag and one step: where the host takes free
    /// memory back, a page the system hands out for the first time in a while is costly (what it
    /// costs is in bench/README.md), so a longer lead and lag in larger steps make a full sync
    /// slower than 16, 12 and 4 MiB do.
    static let leadLimit: Int64 = 16 << 20

    /// Pages are given back in steps of this many bytes, this far behind the furthest read: past
    /// the installer's read-ahead (its workers read at most about 7 MiB ahead of the reader that
    /// hands the data over), so that no page is given back before every reader is done with it.
    static let releaseStep: Int64 = 4 << 20
    static let releaseLag: Int64 = 12 << 20

    /// Opens (creating) and locks the `.part` at `path` of a package of `size` bytes and this
    /// sha256 (and `tocSHA256`, for a xar), keeping what an earlier run wrote and hashing it.
    package init(path: String, size: Int64, sha256: String, tocSHA256: String?, url: String) throws {
        self.path = path
        self.size = size
        self.url = url
        expectedSHA256 = sha256.lowercased()
        expectedTOCSHA256 = tocSHA256?.lowercased()
        guard size >= 0 else { throw DownloadError.sizeMismatch(url: url, "the expected size is negative") }
        descriptor = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw DownloadError.io(path: path, "cannot open the download file: \(errnoText())") }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let busy = errno == EWOULDBLOCK
            let message = errnoText()
            close(descriptor)
            descriptor = -1
            throw busy ? DownloadError.busy(path: path) : DownloadError.io(path: path, message)
        }
        try keepPrefix()
    }

    // No lock here: nothing else holds the object any more, and the last reference may be let go
    // of while the lock is held.
    deinit { if descriptor >= 0 { close(descriptor) } }

    /// Closes the file, which lets the next download of it take its lock at once, whoever still
    /// holds this object (a transport may release its last reference later). Only once nothing
    /// reads it any more: reads take the descriptor without the lock.
    package func closeFile() {
        condition.withLock {
            if descriptor >= 0 { close(descriptor) }
            descriptor = -1
        }
    }

    /// Bytes in the file.
    package var length: Int64 { condition.withLock { written } }
    /// Bytes that arrived in this run.
    package var downloaded: Int64 { condition.withLock { received } }
    /// Bytes of an earlier run kept (0 once the download started over).
    var keptFromStart: Int64 { condition.withLock { keptPrefix } }

    /// Takes what an earlier run wrote (hashed now, as if just written), or empties a file longer
    /// than the package.
    private func keepPrefix() throws {
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { throw DownloadError.io(path: path, "not a regular file") }
        var existing = Int64(info.st_size)
        if existing > size {
            guard ftruncate(descriptor, 0) == 0 else { throw DownloadError.io(path: path, errnoText()) }
            existing = 0
        }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        try condition.withLock {
            do {
                while written < existing {
                    let want = Int(min(Int64(buffer.count), existing - written))
                    let got = readFully(descriptor, UnsafeMutableRawBufferPointer(rebasing: buffer[0 ..< want]), at: written)
                    guard got == want else { throw DownloadError.io(path: path, got < 0 ? errnoText() : "the file shrank while it was read") }
                    try absorb(UnsafeRawBufferPointer(rebasing: buffer[0 ..< got]))
                }
            } catch let error as DownloadError where error.disposition == .refused {
                // What an earlier run left does not start like the catalog's package: start over.
                guard ftruncate(descriptor, 0) == 0 else { throw DownloadError.io(path: path, errnoText()) }
                (written, hasher, tocEnd, existing) = (0, SHA256(), nil, 0)
            }
            keptPrefix = existing
        }
    }

    /// Appends a chunk that arrived, refusing any byte past the package's size.
    package func append(_ chunk: Data) throws {
        try condition.withLock {
            guard failure == nil else { throw failure! }
            guard Int64(chunk.count) <= size - written else { throw DownloadError.bodyTooLong(url: url, limit: size) }
            try chunk.withUnsafeBytes { bytes in
                guard writeFully(descriptor, bytes, at: written) else { throw DownloadError.io(path: path, "cannot write: \(errnoText())") }
                try absorb(bytes)
            }
            received += Int64(chunk.count)
            condition.broadcast()
        }
    }

    /// Counts `bytes` (just written at `written`) in: the hash, and the TOC's check as its end
    /// passes. Called under the lock.
    private func absorb(_ bytes: UnsafeRawBufferPointer) throws {
        var rest = bytes
        if let expected = expectedTOCSHA256 {
            if tocEnd == nil, written + Int64(rest.count) >= Int64(XarHeader.size) {
                tocEnd = try headerEnd(appending: rest)
            }
            if let end = tocEnd, written < end, written + Int64(rest.count) >= end {
                let head = Int(end - written)
                hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: rest[0 ..< head]))
                written += Int64(head)
                rest = UnsafeRawBufferPointer(rebasing: rest[head...])
                let digest = hasher.finalize().hexString
                guard digest == expected else {
                    throw DownloadError.tableOfContentsMismatch(url: url, expected: expected, actual: digest)
                }
            }
        }
        hasher.update(bufferPointer: rest)
        written += Int64(rest.count)
    }

    /// Where the bytes `tocSHA256` anchors end, from the header (some of its bytes in `more`,
    /// about to be written after the first `written`).
    private func headerEnd(appending more: UnsafeRawBufferPointer) throws -> Int64 {
        var header = [UInt8](repeating: 0, count: XarHeader.size)
        let old = Int(min(written, Int64(XarHeader.size)))
        if old > 0 {
            let got = header.withUnsafeMutableBytes { readFully(descriptor, UnsafeMutableRawBufferPointer(rebasing: $0[0 ..< old]), at: 0) }
            guard got == old else { throw DownloadError.io(path: path, errnoText()) }
        }
        for index in old ..< XarHeader.size { header[index] = more[index - old] }
        guard let end = XarHeader(header)?.anchoredBytes.upperBound, end <= size else {
            throw DownloadError.sizeMismatch(url: url, "its header is not a xar header whose table of contents fits the package")
        }
        return end
    }

    /// Empties the file: the server is sending it from byte 0. A reader that already read the
    /// start read the same bytes (the catalog entry is the same); everything is checked again.
    func restart() throws {
        try condition.withLock {
            guard ftruncate(descriptor, 0) == 0 else { throw DownloadError.io(path: path, errnoText()) }
            written = 0
            keptPrefix = 0
            hasher = SHA256()
            tocEnd = nil
        }
    }

    /// The download is over: checks the size and sha256, and lets the installer commit (or, on a
    /// mismatch, fails it). A wrong sha256 deletes the file.
    package func finish() throws {
        try condition.withLock {
            defer { condition.broadcast() }
            guard written == size else {
                let error = DownloadError.sizeMismatch(url: url, "got \(written) bytes, expected \(size)")
                failure = failure ?? error
                throw error
            }
            let actual = hasher.finalize().hexString
            guard actual == expectedSHA256 else {
                unlink(path)
                let error = DownloadError.checksumMismatch(url: url, expected: expectedSHA256, actual: actual)
                failure = failure ?? error
                throw error
            }
            verified = true
        }
    }

    /// The download failed or was cancelled: reads waiting for bytes, and the wait for the
    /// verdict, throw `error` (the first failure wins).
    package func fail(_ error: any Error) {
        condition.withLock {
            if failure == nil && !verified { failure = error }
            condition.broadcast()
        }
        wakeRoomWaiters()
    }

    /// From now on the download waits (`waitForRoom`) whenever it is `limit` bytes ahead of
    /// the furthest read, until `stopPacing`.
    package func pace(within limit: Int64 = PartFile.leadLimit) {
        condition.withLock { lead = limit }
    }

    /// The reader is done (or no longer reads in order): the download runs free.
    package func stopPacing() {
        condition.withLock { lead = nil }
        wakeRoomWaiters()
    }

    /// Returns once the download may write more: it is less than the lead ahead of what the
    /// reader asked for, nobody paces it, or the file failed. Any read waiting for bytes not yet
    /// written lets it go on at once, so the two never wait for each other. Returns early when
    /// the task is cancelled (the caller's next step throws).
    package func waitForRoom() async {
        while !condition.withLock({ hasRoom }) && !Task.isCancelled {
            await withTaskCancellationHandler {
                await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                    let now: Bool = condition.withLock {
                        if hasRoom || Task.isCancelled { return true }
                        roomWaiters.append(waiter)
                        return false
                    }
                    if now { waiter.resume() }
                }
            } onCancel: {
                wakeRoomWaiters()
            }
        }
    }

    /// Whether the download is waiting for the reads to catch up.
    package var downloadIsWaiting: Bool { condition.withLock { !roomWaiters.isEmpty } }

    /// Whether the download may write on. Called under the lock.
    private var hasRoom: Bool {
        guard let lead, failure == nil else { return true }
        return written - max(wanted, readFrontier) < lead
    }

    /// Lets the waiting download check again.
    private func wakeRoomWaiters() {
        let waiters: [CheckedContinuation<Void, Never>] = condition.withLock {
            defer { roomWaiters = [] }
            return roomWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Waits until the download is over and its sha256 matched (returns), or it failed (throws
    /// its error): the installer's last step before its version goes into place.
    func waitUntilVerified() throws {
        try condition.withLock {
            while !verified && failure == nil { condition.wait() }
            if !verified, let failure { throw failure }
        }
    }

    /// Bytes `offset ..< offset + buffer.count` (fewer at the package's end), once written.
    package func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        guard offset < size else { return 0 }
        let end = min(offset + Int64(buffer.count), size)
        let wake: Bool = condition.withLock {
            wanted = max(wanted, end)
            return !roomWaiters.isEmpty && hasRoom
        }
        if wake { wakeRoomWaiters() }
        let descriptor: Int32 = try condition.withLock {
            while written < end && failure == nil { condition.wait() }
            if written < end, let failure { throw failure }
            return self.descriptor
        }
        let count = readFully(descriptor, UnsafeMutableRawBufferPointer(rebasing: buffer[0 ..< Int(end - offset)]), at: offset)
        guard count >= 0 else { throw DownloadError.io(path: path, errnoText()) }
        let release: Range<Int64>? = condition.withLock {
            readFrontier = max(readFrontier, end)
            let upTo = (readFrontier - Self.releaseLag) & ~4095
            guard upTo - released >= Self.releaseStep else { return nil }
            defer { released = upTo }
            // From a step back: pages still being written out last time are given back now.
            return max(0, released - Self.releaseStep) ..< upTo
        }
        if let release { self.release(release, of: descriptor) }
        return count
    }

    /// Starts writing out the bytes of `range` and gives back the pages already written.
    private func release(_ range: Range<Int64>, of descriptor: Int32) {
        #if os(Linux)
        _ = CSyscalls_startWriteback(descriptor, range.lowerBound, Int64(range.count))
        _ = CSyscalls_dropCachedRange(descriptor, range.lowerBound, Int64(range.count))
        #endif
    }

    /// Deletes the file.
    package func remove() {
        condition.withLock {
            unlink(path)
            written = 0
        }
    }
}
