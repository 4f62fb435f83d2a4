import Crypto
import Foundation
import PkgKitDiagnostics
import PkgKitTransport

/// Downloads one package to its `.part` (`PartFile`), resuming what an earlier run or attempt left
/// there; `run(using:)` then checks its size and sha256 (the sync's streamed install checks them
/// itself, through the `PartFile` it reads as the bytes arrive).
///
/// - A `.part` of N bytes (N below the expected size) is continued with `Range: bytes=N-`; a
///   206 whose `Content-Range` starts at N and ends at the expected size appends, a 200 starts
///   over from byte 0 (the file is truncated first). A `.part` longer than expected is emptied.
/// - Transient failures (connection reset, timeout, 5xx) are retried with the `RetryPolicy`'s
///   backoff, resuming each time; 4xx fail at once.
/// - Nothing is ever written past the expected size: a longer body is cut off and refused.
///
/// The `.part` is locked (`flock`) while a download runs, so two downloads of it never mix, and
/// is never flushed to disk: every use checks its sha256 whole, so a `.part` that a crash left
/// with lost or stale blocks is refused (and deleted), never installed, and flushing it would
/// make a sync write the whole package to disk before its install could finish.
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

        package init(bytesDownloaded: Int64, resumedFrom: Int64, attempts: Int) {
            self.bytesDownloaded = bytesDownloaded
            self.resumedFrom = resumedFrom
            self.attempts = attempts
        }
    }

    /// Runs the download into its own `.part` and checks its size and sha256 at the end.
    /// `progress` is called with (bytes in the `.part`, expected size) as they grow, from any
    /// thread. Throws `DownloadError` for refusals and local failures, `TransportError` when the
    /// server failed for good, `CancellationError` when cancelled (the `.part` stays, to be resumed).
    public func run(using transport: any HTTPTransport,
                    progress: (@Sendable (Int64, Int64) -> Void)? = nil) async throws -> Result {
        let part = try PartFile(path: partPath, size: expectedSize, sha256: expectedSHA256, tocSHA256: nil, url: url.absoluteString)
        defer { part.closeFile() }
        let result = try await run(into: part, using: transport, progress: progress)
        try part.finish()
        return result
    }

    /// Runs the download into `part`, which an installer may be reading meanwhile; the caller
    /// checks it (`PartFile.finish`). On any failure `part` is failed too, so that its readers stop.
    package func run(into part: PartFile, using transport: any HTTPTransport,
             progress: (@Sendable (Int64, Int64) -> Void)? = nil) async throws -> Result {
        do {
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
            return Result(bytesDownloaded: part.downloaded, resumedFrom: min(resumedFrom, part.keptFromStart), attempts: attempts)
        } catch {
            part.fail(error)
            throw error
        }
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
                            "asked for bytes \(offset)-, got \(head.contentRange?.headerValue ?? "no Content-Range"), expected a package of \(size) bytes")
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
                try part.append(chunk)
                progress?(part.length, size)
                await part.waitForRoom()
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
    /// The header and table of contents differ from the catalog's `tocSHA256`: refused before
    /// the rest was read.
    case tableOfContentsMismatch(url: String, expected: String, actual: String)
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
        case .checksumMismatch(let url, _, _), .tableOfContentsMismatch(let url, _, _), .sizeMismatch(let url, _), .bodyTooLong(let url, _):
            return url
        case .io(let path, _), .busy(let path): return path
        }
    }

    /// The failure in words, without its path.
    public var message: String {
        switch self {
        case .checksumMismatch(_, let expected, let actual):
            return "sha256 is \(actual), the catalog says \(expected): the download was deleted"
        case .tableOfContentsMismatch(_, let expected, let actual):
            return "its header and table of contents have sha256 \(actual), the catalog's tocSHA256 is \(expected): refused before the rest was read"
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
        case .checksumMismatch, .tableOfContentsMismatch, .sizeMismatch, .bodyTooLong: return .refused
        case .io, .busy: return .failed
        }
    }

    /// `checksum-mismatch` when the bytes are not the catalog's, `io-error` when the `.part`
    /// could not be written, `unreadable-input` when another download holds it.
    public var diagnostic: Diagnostic {
        switch self {
        case .checksumMismatch, .tableOfContentsMismatch, .sizeMismatch, .bodyTooLong: return Diagnostic(.checksumMismatch, path: path, message)
        case .io: return Diagnostic(.ioError, path: path, message)
        case .busy: return Diagnostic(.unreadableInput, path: path, message)
        }
    }
}
