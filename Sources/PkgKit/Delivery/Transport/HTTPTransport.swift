import Foundation

/// Fetches bytes by URL, streaming the body in chunks: the one small client behind which the
/// network sits, so that tests can fault it. `URLSessionTransport` speaks HTTP(S),
/// `LocalFileTransport` reads `file://` URLs with the same semantics, and `StandardTransport`
/// picks one by scheme.
public protocol HTTPTransport: Sendable {
    /// GETs `request.url`. When the response head arrives with status 200 or 206, `onResponse`
    /// is called once with it; then `onBody` with each chunk of the body, in order, never two at
    /// once (possibly on another thread than the caller's). Either may throw to stop the
    /// transfer; that error is rethrown. Returns the head once the whole body was handed over.
    ///
    /// Throws `TransportError`: `.status` for any other status (the body is not handed over),
    /// `.bodyTooLong` when the body passes `request.maximumBodyBytes` or is longer than its own
    /// `Content-Length` (nothing past the limit reaches `onBody`), `.connectionLost` when it
    /// ends short, `.timedOut` when no byte arrives for the idle timeout; and
    /// `CancellationError` when the calling task is cancelled.
    func get(_ request: HTTPRequest,
             onResponse: @escaping @Sendable (HTTPResponseHead) throws -> Void,
             onBody: @escaping @Sendable (Data) throws -> Void) async throws -> HTTPResponseHead
}

/// One GET: a URL, an optional byte range and a bound on the body.
public struct HTTPRequest: Sendable, Equatable {
    /// What to fetch.
    public var url: URL
    /// The bytes wanted (a `Range` header), or nil for the whole resource.
    public var range: ByteRange?
    /// The most body bytes accepted; a longer body is cut off and refused.
    public var maximumBodyBytes: Int64

    /// A GET of `url`, optionally of a range, accepting at most `maximumBodyBytes`.
    public init(url: URL, range: ByteRange? = nil, maximumBodyBytes: Int64) {
        self.url = url
        self.range = range
        self.maximumBodyBytes = maximumBodyBytes
    }
}

/// An HTTP byte range: `first ... last` inclusive, or `first` to the end when `last` is nil.
public struct ByteRange: Sendable, Equatable, CustomStringConvertible {
    /// The first byte wanted.
    public var first: Int64
    /// The last byte wanted (inclusive), or nil for "to the end".
    public var last: Int64?

    /// The range `first ... last` (or `first...` when `last` is nil).
    public init(first: Int64, last: Int64? = nil) {
        precondition(first >= 0 && (last ?? first) >= first, "invalid byte range")
        self.first = first
        self.last = last
    }

    /// The `Range` header's value: `bytes=first-last` or `bytes=first-`.
    public var headerValue: String { "bytes=\(first)-" + (last.map(String.init) ?? "") }

    /// Bytes in the range, when bounded.
    public var count: Int64? { last.map { $0 - first + 1 } }

    /// The header value.
    public var description: String { headerValue }
}

/// A `Content-Range: bytes first-last/total` header (`total` nil for `*`).
public struct ContentRange: Sendable, Equatable {
    /// The first byte sent.
    public var first: Int64
    /// The last byte sent (inclusive).
    public var last: Int64
    /// The whole resource's length, when the server says it.
    public var total: Int64?

    /// A range `first ... last` of a resource of `total` bytes.
    public init(first: Int64, last: Int64, total: Int64?) {
        self.first = first
        self.last = last
        self.total = total
    }

    /// Parses a header value such as `bytes 100-199/1000` or `bytes 0-9/*`; nil when malformed.
    public init?(headerValue: String) {
        let text = headerValue.trimmingCharacters(in: .whitespaces)
        guard text.lowercased().hasPrefix("bytes ") else { return nil }
        let spec = text.dropFirst(6).trimmingCharacters(in: .whitespaces)
        let halves = spec.split(separator: "/", omittingEmptySubsequences: false)
        guard halves.count == 2 else { return nil }
        let bounds = halves[0].split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2, let first = Int64(bounds[0]), let last = Int64(bounds[1]), first >= 0, last >= first else { return nil }
        if halves[1] == "*" {
            total = nil
        } else {
            guard let total = Int64(halves[1]), total > last else { return nil }
            self.total = total
        }
        self.first = first
        self.last = last
    }

    /// Bytes in the range.
    public var count: Int64 { last - first + 1 }
}

/// The parts of a response head that delivery uses.
public struct HTTPResponseHead: Sendable, Equatable {
    /// 200 or 206 (other statuses are thrown as `TransportError.status`).
    public var statusCode: Int
    /// `Content-Length`, when the server sent one.
    public var contentLength: Int64?
    /// `Content-Range`, when the server sent a valid one.
    public var contentRange: ContentRange?
    /// `Content-Type`, when sent.
    public var contentType: String?

    /// A head with these values.
    public init(statusCode: Int, contentLength: Int64?, contentRange: ContentRange? = nil, contentType: String? = nil) {
        self.statusCode = statusCode
        self.contentLength = contentLength
        self.contentRange = contentRange
        self.contentType = contentType
    }
}

/// Why a fetch failed. `isTransient` tells which failures may pass by themselves.
public enum TransportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The server answered with a status other than 200 or 206.
    case status(Int, url: String)
    /// The connection was reset or closed before the body was complete.
    case connectionLost(url: String, String)
    /// No byte arrived for the idle timeout.
    case timedOut(url: String)
    /// The server could not be reached (connection refused, no route).
    case cannotConnect(url: String, String)
    /// The body passed the bound it was given (or its own `Content-Length`): cut off, refused.
    case bodyTooLong(url: String, limit: Int64)
    /// The URL's scheme is not http, https or file, or the URL is malformed.
    case unsupportedURL(String)
    /// Any other failure (name resolution, TLS, local file errors…).
    case failed(url: String, String)

    /// True for failures that may pass if tried again: connection resets, timeouts, a server
    /// that cannot be reached (yet), and HTTP 5xx. 4xx and everything else are final.
    public var isTransient: Bool {
        switch self {
        case .status(let code, _): return (500...599).contains(code)
        case .connectionLost, .timedOut, .cannotConnect: return true
        case .bodyTooLong, .unsupportedURL, .failed: return false
        }
    }

    /// The failure in words, with its URL.
    public var description: String {
        switch self {
        case .status(404, let url) where url.hasPrefix("file://"):
            return "\(URL(string: url)?.path ?? url): no such file"
        case .status(let code, let url): return "\(url): the server answered HTTP \(code)"
        case .connectionLost(let url, let detail): return "\(url): the connection was lost (\(detail))"
        case .timedOut(let url): return "\(url): no data arrived for too long (timed out)"
        case .cannotConnect(let url, let detail): return "\(url): cannot connect to the server (\(detail))"
        case .bodyTooLong(let url, let limit): return "\(url): the server sent more than the \(limit) bytes expected; refused"
        case .unsupportedURL(let url): return "\(url): only http://, https:// and file:// URLs are supported"
        case .failed(let url, let detail): return "\(url): \(detail)"
        }
    }

    /// The diagnostic for this failure: `unreadable-input` (the source could not be read).
    public var diagnostic: Diagnostic { Diagnostic(.unreadableInput, path: nil, description) }
}

extension HTTPTransport {
    /// GETs a whole small resource into memory, refusing a body over `maximumBytes`.
    public func fetchData(_ url: URL, maximumBytes: Int64) async throws -> Data {
        let collected = LockedData()
        _ = try await get(HTTPRequest(url: url, maximumBodyBytes: maximumBytes),
                          onResponse: { _ in }, onBody: { collected.append($0) })
        return collected.value
    }
}

/// Bytes appended from the transport's thread and read once the transfer is over.
private final class LockedData: @unchecked Sendable {
    // @unchecked: `data` is only touched under `lock`.
    private let lock = NSLock()
    private var data = Data()

    func append(_ chunk: Data) { lock.withLock { data.append(chunk) } }
    var value: Data { lock.withLock { data } }
}
