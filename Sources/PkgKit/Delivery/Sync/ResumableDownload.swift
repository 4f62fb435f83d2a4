import Crypto
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Downloads one package to a `.part` file, resuming what an earlier run or attempt left there,
/// and checks its size and sha256 at the end.
///
/// - A `.part` of N bytes (N below the expected size) is continued with `Range: bytes=N-`; a
///   206 whose `Content-Range` starts at N and ends at the expected size appends, a 200 starts
///   over from byte 0 (the file is truncated first). A `.part` longer than expected is emptied.
/// - Transient failures (connection reset, timeout, 5xx) are retried with the `RetryPolicy`'s
///   backoff, resuming each time; 4xx fail at once.
/// - Nothing is ever written past the expected size: a longer body is cut off and refused.
/// - At the end, the size and the sha256 (of the resumed prefix too, read back with the rest) must
///   match; a wrong sha256 deletes the `.part` (`checksum-mismatch`).
///
/// The `.part` is locked (`flock`) while a download runs, so two downloads of it never mix.
/// Its folder must exist. The file is left in place after success for the caller to use.
///
/// The `.part` is never flushed to disk (`fsync`): every run checks its sha256 whole, so a
/// `.part` that a crash left with lost or stale blocks is refused and deleted (the next run
/// downloads it again), never installed; what is installed from it, the installer flushes.
/// Flushing it made a full sync write the whole package to disk before its install could start.
public struct ResumableDownload: Sendable {
    /// What to download.
    public var url: URL
    /// Where: the `.part` file, in a folder that exists.
    public var partPath: String
    /// The package's size in bytes, from the catalog.
    public var expectedSize: Int64
    /// The package's sha256 (hex), from the catalog.
    public var expectedSHA256: String
    /// How transient failures are retried.
    public var retryPolicy: RetryPolicy
    /// How long the server may stay silent, on which clock (retry waits use it too).
    public var transferPolicy: TransferPolicy

    /// A download of `url` into `partPath`, expected to be `expectedSize` bytes with sha256
    /// `expectedSHA256`.
    public init(url: URL, partPath: String, expectedSize: Int64, expectedSHA256: String,
                retryPolicy: RetryPolicy = RetryPolicy(), transferPolicy: TransferPolicy = TransferPolicy()) {
        self.url = url
        self.partPath = partPath
        self.expectedSize = expectedSize
        self.expectedSHA256 = expectedSHA256.lowercased()
        self.retryPolicy = retryPolicy
        self.transferPolicy = transferPolicy
    }

    /// What a finished download did.
    public struct Result: Sendable, Equatable {
        /// Bytes received over the network in this run (all attempts, restarts included).
        public var bytesDownloaded: Int64
        /// Bytes already in the `.part` when the run began and kept.
        public var resumedFrom: Int64
        /// Requests made.
        public var attempts: Int
    }

    /// Runs the download. `progress` is called with (bytes in the `.part`, expected size) as
    /// they grow, from any thread. Throws `DownloadError` for refusals and local failures,
    /// `TransportError` when the server failed for good, `CancellationError` when cancelled
    /// (the `.part` stays, to be resumed).
    public func run(using transport: any HTTPTransport,
                    progress: (@Sendable (Int64, Int64) -> Void)? = nil) async throws -> Result {
        guard expectedSize >= 0 else { throw DownloadError.sizeMismatch(url: url.absoluteString, "the expected size is negative") }
        let part = try PartFile(path: partPath)
        defer { part.release() }
        try part.prepare(expectedSize: expectedSize)
        let resumedFrom = part.length
        progress?(part.length, expectedSize)
        var attempts = 0
        try await retryPolicy.run(clock: transferPolicy.clock) { number, madeProgress in
            attempts = number
            guard part.length < expectedSize else { return }
            let before = part.downloaded
            defer { madeProgress = part.downloaded > before }
            try await attempt(part, transport: transport, progress: progress)
        }
        guard part.length == expectedSize else {
            throw DownloadError.sizeMismatch(url: url.absoluteString, "got \(part.length) bytes, expected \(expectedSize)")
        }
        let actual = try part.digest()
        guard actual == expectedSHA256 else {
            part.remove()
            throw DownloadError.checksumMismatch(url: url.absoluteString, expected: expectedSHA256, actual: actual)
        }
        return Result(bytesDownloaded: part.downloaded, resumedFrom: min(resumedFrom, part.keptFromStart), attempts: attempts)
    }

    /// One request: continue from the `.part`'s length, or start over when the server sends
    /// the whole file.
    private func attempt(_ part: PartFile, transport: any HTTPTransport, progress: (@Sendable (Int64, Int64) -> Void)?) async throws {
        let offset = part.length
        let request = HTTPRequest(url: url, range: offset > 0 ? ByteRange(from: offset) : nil, maximumBodyBytes: expectedSize)
        let size = expectedSize, link = url.absoluteString
        do {
            _ = try await transport.get(request, policy: transferPolicy, onResponse: { head in
                switch head.statusCode {
                case 206:
                    guard offset > 0, let range = head.contentRange, range.first == offset, range.last == size - 1,
                          range.total == nil || range.total == size else {
                        throw DownloadError.sizeMismatch(url: link,
                            "asked for bytes \(offset)-, got \(head.contentRange.map { "\($0.first)-\($0.last)/\($0.total.map(String.init) ?? "*")" } ?? "no Content-Range"), expected a package of \(size) bytes")
                    }
                case 200:
                    if let length = head.contentLength, length != size {
                        throw DownloadError.sizeMismatch(url: link, "the server's file is \(length) bytes, the catalog says \(size)")
                    }
                    try part.restart()
                default:
                    throw TransportError.status(head.statusCode, url: link)
                }
            }, onBody: { chunk in
                try part.append(chunk, limit: size, url: link)
                progress?(part.length, size)
            })
        } catch let error as TransportError {
            switch error {
            case .status(416, _) where offset > 0:
                // The server's file is shorter than what we hold: start over (a transient error
                // makes the policy try again, now without a range).
                try part.restart()
                throw TransportError.connectionLost(url: link, "the server could not satisfy bytes \(offset)-; starting over")
            case .bodyTooLong(_, let limit):
                throw DownloadError.bodyTooLong(url: link, limit: limit)
            default:
                throw error
            }
        } catch let error as DownloadError {
            if case .sizeMismatch = error { part.remove() }
            throw error
        }
        if part.length < size {
            throw TransportError.connectionLost(url: link, "the body ended at byte \(part.length) of \(size)")
        }
    }
}

/// Why a download was refused or could not be written.
public enum DownloadError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The bytes' sha256 differs from the catalog's; the `.part` was deleted.
    case checksumMismatch(url: String, expected: String, actual: String)
    /// The server's file is not the size the catalog says (or its ranges do not fit it);
    /// the `.part` was deleted.
    case sizeMismatch(url: String, String)
    /// The body went past the expected size; nothing past it was written.
    case bodyTooLong(url: String, limit: Int64)
    /// The `.part` could not be opened, written or flushed (disk full, permissions…).
    case io(path: String, String)
    /// Another download holds the `.part`'s lock.
    case busy(path: String)

    /// The URL of the package (or the path of the `.part`) the failure concerns.
    public var path: String {
        switch self {
        case .checksumMismatch(let url, _, _), .sizeMismatch(let url, _), .bodyTooLong(let url, _): return url
        case .io(let path, _), .busy(let path): return path
        }
    }

    /// The failure in words, without its path.
    public var message: String {
        switch self {
        case .checksumMismatch(_, let expected, let actual):
            return "sha256 is \(actual), the catalog says \(expected): the download was deleted"
        case .sizeMismatch(_, let detail): return "the package does not match its catalog entry (\(detail))"
        case .bodyTooLong(_, let limit): return "the server sent more than the \(limit) bytes the catalog announces; refused"
        case .io(_, let detail): return detail
        case .busy: return "another download of this package is running"
        }
    }

    /// The failure in words, led by its path.
    public var description: String { "\(path): \(message)" }
}

extension DownloadError: DiagnosableError {
    /// Refused when the package on the server is not the catalog's; a failure when the local
    /// file could not be written or is busy.
    public var disposition: ErrorDisposition {
        switch self {
        case .checksumMismatch, .sizeMismatch, .bodyTooLong: return .refused
        case .io, .busy: return .failed
        }
    }

    /// `checksum-mismatch` when the bytes are not the catalog's, `io-error` when the `.part`
    /// could not be written, `unreadable-input` when another download holds it.
    public var diagnostic: Diagnostic {
        switch self {
        case .checksumMismatch, .sizeMismatch, .bodyTooLong: return Diagnostic(.checksumMismatch, path: path, message)
        case .io: return Diagnostic(.ioError, path: path, message)
        case .busy: return Diagnostic(.unreadableInput, path: path, message)
        }
    }
}

/// The `.part` file: its descriptor, length and sha256. Written from the transport's thread, one
/// chunk at a time; hashed only once the download ends, from the page cache. The transport's
/// thread paces the transfer (the network waits for it), and hashing each chunk there took as
/// long as writing it: reading the file back once at the end costs less.
private final class PartFile: @unchecked Sendable {
    // @unchecked: every mutable field is guarded by `lock`.
    let path: String
    private let lock = NSLock()
    private var fd: Int32
    private var written: Int64 = 0
    private var received: Int64 = 0
    private var keptPrefix: Int64 = 0

    init(path: String) throws {
        self.path = path
        fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw DownloadError.io(path: path, "cannot open the download file: \(errnoText())") }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let busy = errno == EWOULDBLOCK
            let message = errnoText()
            close(fd)
            fd = -1
            throw busy ? DownloadError.busy(path: path) : DownloadError.io(path: path, message)
        }
    }

    var length: Int64 { lock.withLock { written } }
    var downloaded: Int64 { lock.withLock { received } }
    var keptFromStart: Int64 { lock.withLock { keptPrefix } }

    /// Takes what is already there (hashed with the rest at the end), or empties a file longer
    /// than expected.
    func prepare(expectedSize: Int64) throws {
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            throw DownloadError.io(path: path, "not a regular file")
        }
        var existing = Int64(info.st_size)
        if existing > expectedSize {
            guard ftruncate(fd, 0) == 0 else { throw DownloadError.io(path: path, errnoText()) }
            existing = 0
        }
        lock.withLock {
            written = existing
            keptPrefix = existing
        }
    }

    /// Empties the file: the server is sending it from byte 0.
    func restart() throws {
        try lock.withLock {
            guard ftruncate(fd, 0) == 0 else { throw DownloadError.io(path: path, errnoText()) }
            written = 0
            keptPrefix = 0
        }
    }

    /// Appends a chunk, refusing any byte past `limit`.
    func append(_ chunk: Data, limit: Int64, url: String) throws {
        try lock.withLock {
            guard written + Int64(chunk.count) <= limit else { throw DownloadError.bodyTooLong(url: url, limit: limit) }
            let ok = chunk.withUnsafeBytes { writeFully(fd, $0, at: written) }
            guard ok else { throw DownloadError.io(path: path, "cannot write: \(errnoText())") }
            written += Int64(chunk.count)
            received += Int64(chunk.count)
        }
    }

    /// The sha256 of everything written, as lowercase hex, read back from the file.
    func digest() throws -> String {
        try lock.withLock {
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
            defer { buffer.deallocate() }
            var hasher = SHA256()
            var hashed: Int64 = 0
            while hashed < written {
                let want = Int(min(Int64(buffer.count), written - hashed))
                let got = readFully(fd, UnsafeMutableRawBufferPointer(rebasing: buffer[0..<want]), at: hashed)
                guard got == want else { throw DownloadError.io(path: path, got < 0 ? errnoText() : "the file shrank while it was read") }
                hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: buffer[0..<got]))
                hashed += Int64(got)
            }
            return hasher.finalize().hexString
        }
    }

    /// Deletes the file.
    func remove() {
        lock.withLock {
            unlink(path)
            written = 0
        }
    }

    /// Closes the file (and so releases its lock).
    func release() {
        lock.withLock {
            if fd >= 0 { close(fd) }
            fd = -1
        }
    }

    deinit { if fd >= 0 { close(fd) } }
}
