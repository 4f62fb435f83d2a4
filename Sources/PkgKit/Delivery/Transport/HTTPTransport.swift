import Foundation
import PkgKitDiagnostics

/// Fetches bytes by URL: the one small seam behind which the network sits, so that tests can
/// script it. `AsyncHTTPClientTransport` speaks HTTP(S) on Linux, `URLSessionTransport` on Apple
/// platforms, `LocalFileTransport` reads `file://` URLs with the same semantics, and
/// `StandardTransport` picks one by scheme.
///
/// A transport only moves bytes. Everything that must hold whatever the server does (the idle
/// timeout, the cut-off of a body longer than expected, a body that ends short) is enforced
/// once, above every transport, by `get(_:policy:onResponse:onBody:)`.
public protocol HTTPTransport: Sendable {
    /// Sends `request` and returns when the response head has arrived, whatever its status. The
    /// body is then read from the response at the reader's pace: a transport reads from the
    /// network only as fast as the body is consumed, so a slow reader holds the server back
    /// instead of filling memory. Cancelling the task that waits on `send` or on the body ends
    /// the transfer and drops the connection; so does `HTTPBody.cancel()`, and so does dropping
    /// the body before its end.
    func send(_ request: HTTPRequest) async throws -> HTTPResponse
}

/// One GET: a URL, an optional byte range, a bound on the body, and the few extra headers a
/// catalog request sends.
public struct HTTPRequest: Sendable, Equatable {
    /// What to fetch.
    public var url: URL
    /// The bytes wanted (a `Range` header), or nil for the whole resource.
    public var range: ByteRange?
    /// The most body bytes accepted on the wire; a longer body is cut off and refused.
    public var maximumBodyBytes: Int64
    /// `If-None-Match` and `If-Modified-Since`: the validators of a copy already held, so that
    /// an unchanged resource is answered `304 Not Modified` without a body.
    public var validators: HTTPValidators?
    /// True sends `Accept-Encoding: gzip` (the body may then come compressed, as the response's
    /// `contentEncoding` says); false asks for the bytes as stored (`identity`), which sizes,
    /// digests and ranges of packages rely on.
    public var acceptsGzip: Bool

    /// A GET of `url`, optionally of a range, accepting at most `maximumBodyBytes`.
    public init(url: URL, range: ByteRange? = nil, maximumBodyBytes: Int64, validators: HTTPValidators? = nil,
                acceptsGzip: Bool = false) {
        self.url = url
        self.range = range
        self.maximumBodyBytes = maximumBodyBytes
        self.validators = validators
        self.acceptsGzip = acceptsGzip
    }

    /// The `Accept-Encoding` header's value.
    public var acceptEncoding: String { acceptsGzip ? "gzip" : "identity" }
}

/// The bytes `lowerBound ..< upperBound` of a resource (half-open, like Swift's `Range`), or from
/// `lowerBound` to its end when `upperBound` is nil.
public struct ByteRange: Sendable, Equatable, CustomStringConvertible {
    /// The first byte wanted.
    public var lowerBound: Int64
    /// One past the last byte wanted, or nil for "to the end".
    public var upperBound: Int64?

    /// The bytes from `lowerBound` up to (not including) `upperBound`, or to the end.
    public init(from lowerBound: Int64, to upperBound: Int64? = nil) {
        precondition(lowerBound >= 0 && (upperBound ?? lowerBound + 1) > lowerBound, "invalid byte range")
        self.lowerBound = lowerBound
        self.upperBound = upperBound
    }

    /// The bytes of `range`.
    public init(_ range: Range<Int64>) {
        self.init(from: range.lowerBound, to: range.upperBound)
    }

    /// The `Range` header's value: `bytes=first-last` (HTTP's bounds are inclusive) or `bytes=first-`.
    public var headerValue: String { "bytes=\(lowerBound)-" + (upperBound.map { String($0 - 1) } ?? "") }

    /// Bytes in the range, when bounded.
    public var count: Int64? { upperBound.map { $0 - lowerBound } }

    /// The header value.
    public var description: String { headerValue }
}

/// A `Content-Range: bytes first-last/total` header (`total` nil for `*`).
public struct ContentRange: Sendable, Equatable {
    /// The first byte sent.
    public var first: Int64
    /// The last byte sent (inclusive, as HTTP writes it).
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

    /// The bytes sent, half-open.
    public var range: Range<Int64> { first ..< last + 1 }

    /// The header's value.
    public var headerValue: String { "bytes \(first)-\(last)/\(total.map(String.init) ?? "*")" }
}

/// The parts of a response head that delivery uses.
public struct HTTPResponseHead: Sendable, Equatable {
    /// The HTTP status.
    public var statusCode: Int
    /// `Content-Length`, when the server sent one.
    public var contentLength: Int64?
    /// `Content-Range`, when the server sent a valid one.
    public var contentRange: ContentRange?
    /// `Content-Type`, when sent.
    public var contentType: String?
    /// `Content-Encoding` as the body arrives (`gzip`), or nil when it is the bytes as stored
    /// (a transport that decodes by itself reports nil).
    public var contentEncoding: String?
    /// `ETag` and `Last-Modified`, when the server sent either.
    public var validators: HTTPValidators?

    /// A head with these values.
    public init(statusCode: Int, contentLength: Int64?, contentRange: ContentRange? = nil, contentType: String? = nil,
                contentEncoding: String? = nil, validators: HTTPValidators? = nil) {
        self.statusCode = statusCode
        self.contentLength = contentLength
        self.contentRange = contentRange
        self.contentType = contentType
        self.contentEncoding = contentEncoding
        self.validators = validators
    }
}

/// A response: its head, and its body still to be read.
public struct HTTPResponse: Sendable {
    /// The status and headers.
    public var head: HTTPResponseHead
    /// The body, read chunk by chunk at the reader's pace.
    public var body: HTTPBody

    /// A response with this head and body.
    public init(head: HTTPResponseHead, body: HTTPBody) {
        self.head = head
        self.body = body
    }
}

/// A response body, pulled chunk by chunk. Each `next` asks the transport for the next chunk
/// (nil at the end); the transport reads no further ahead than a small buffer. Read by one task
/// at a time. A body dropped before its end (its last copy and iterator gone) is cancelled: a
/// transfer nobody reads does not hold its connection, nor the server, any longer.
public struct HTTPBody: AsyncSequence, Sendable {
    /// A chunk of body bytes.
    public typealias Element = Data

    private let source: Source

    /// A body whose chunks come from `next` (nil at the end) and whose transfer `cancel` ends,
    /// dropping the connection. `cancel` may be called from any thread, more than once, and
    /// after the end (where it must leave the connection alone); it is called when the body is
    /// dropped.
    public init(next: @escaping @Sendable () async throws -> Data?, cancel: @escaping @Sendable () -> Void) {
        source = Source(next: next, cancel: cancel)
    }

    /// An empty body.
    public static var empty: HTTPBody { HTTPBody(next: { nil }, cancel: {}) }

    /// Ends the transfer before its end, dropping the connection: what a reader does with a body
    /// it will not read to the end (a refused status, a body cut off at its bound).
    public func cancel() { source.cancel() }

    /// An iterator over the chunks.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(source: source) }

    /// Pulls the next chunk.
    public struct AsyncIterator: AsyncIteratorProtocol {
        fileprivate let source: Source

        /// The next chunk, or nil at the end of the body.
        public mutating func next() async throws -> Data? { try await source.next() }
    }

    fileprivate final class Source: Sendable {
        let next: @Sendable () async throws -> Data?
        let cancel: @Sendable () -> Void

        init(next: @escaping @Sendable () async throws -> Data?, cancel: @escaping @Sendable () -> Void) {
            self.next = next
            self.cancel = cancel
        }

        deinit { cancel() }
    }
}

/// Why a fetch failed. `isTransient` tells which failures may pass by themselves.
public enum TransportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The server answered with a status the caller cannot use (not 200 or 206, or 206 where a
    /// whole file was asked for).
    case status(Int, url: String)
    /// The connection was reset or closed before the body was complete; the detail in words.
    case connectionLost(url: String, String)
    /// Nothing arrived for the idle timeout while the client was waiting for it.
    case timedOut(url: String)
    /// The server could not be reached (connection refused, no route, no such host); the
    /// reason in words.
    case cannotConnect(url: String, String)
    /// The body passed the bound it was given (or its own `Content-Length`): cut off, refused.
    case bodyTooLong(url: String, limit: Int64)
    /// The URL's scheme is not http, https or file, or the URL is malformed.
    case unsupportedURL(String)
    /// The server's TLS connection was not accepted: its certificate did not verify, or the
    /// handshake failed. Never retried; nothing was read from the server.
    case tls(url: String, host: String, TLSFailure)
    /// Any other failure (local file errors…), in words.
    case failed(url: String, String)

    /// True for failures that may pass if tried again: connection resets, timeouts, a server
    /// that cannot be reached (yet), and HTTP 5xx. 4xx, TLS and everything else are final.
    public var isTransient: Bool {
        switch self {
        case .status(let code, _): return (500...599).contains(code)
        case .connectionLost, .timedOut, .cannotConnect: return true
        case .bodyTooLong, .unsupportedURL, .tls, .failed: return false
        }
    }

    /// The URL (or the path of a local file) the failure concerns.
    public var url: String {
        switch self {
        case .status(_, let url), .connectionLost(let url, _), .timedOut(let url), .cannotConnect(let url, _),
             .bodyTooLong(let url, _), .unsupportedURL(let url), .tls(let url, _, _), .failed(let url, _):
            return url.hasPrefix("file://") ? URL(string: url)?.path ?? url : url
        }
    }

    /// The failure in words, without its URL.
    public var message: String {
        switch self {
        case .status(404, let url) where url.hasPrefix("file://"): return "no such file"
        case .status(let code, _): return Self.statusMessage(code)
        case .connectionLost(let url, let detail): return "the connection to \(Self.endpoint(url)) was lost: \(detail)"
        case .timedOut(let url): return "nothing arrived from \(Self.endpoint(url)) for too long (timed out)"
        case .cannotConnect(let url, let detail): return "cannot connect to \(Self.endpoint(url)): \(detail)"
        case .bodyTooLong(_, let limit): return "the server sent more than the \(limit) bytes expected; cut off and refused"
        case .unsupportedURL: return "only http://, https:// and file:// URLs are supported"
        case .tls(_, let host, let failure): return failure.message(host: host)
        case .failed(_, let detail): return detail
        }
    }

    /// A timeout in words: how long is the caller's to set.
    static let timedOutWords: DiagnosticMessage = "nothing arrived for too long (timed out; \(hint: .idleTimeout))"

    /// The failure in words, led by its URL.
    public var description: String { "\(url): \(message)" }

    /// A status in words, with what to check: a 4xx will not pass by itself, a 5xx may.
    private static func statusMessage(_ code: Int) -> String {
        switch code {
        case 401: return "the server answered HTTP 401 (unauthorized): it wants credentials; check the URL, and that the server lets the file be read without them"
        case 403: return "the server answered HTTP 403 (forbidden): check the URL, and that the server lets the file be read"
        case 404: return "the server answered HTTP 404 (not found): check the URL, and that the folder was published there"
        case 410: return "the server answered HTTP 410 (gone): the file was removed from the server; check the URL"
        case 400...499: return "the server answered HTTP \(code): check the URL"
        case 500...599: return "the server answered HTTP \(code) (a server error, which may pass)"
        default: return "the server answered HTTP \(code)"
        }
    }

    /// `host:port` of an http(s) URL, the port spelt out even when it is the scheme's default
    /// (what a person checks a firewall or a server with); the URL itself when it has no host.
    static func endpoint(_ url: String) -> String {
        guard let parsed = URL(string: url), let host = parsed.host, !host.isEmpty else { return url }
        let port = parsed.port ?? (parsed.scheme?.lowercased() == "https" ? 443 : 80)
        return (host.contains(":") ? "[\(host)]" : host) + ":\(port)"
    }
}

extension TransportError: DiagnosableError {
    /// `checksum-mismatch` for a body longer than its catalog entry says (the server does not
    /// serve what the catalog describes), else `unreadable-input` (the source could not be read).
    public var diagnostic: Diagnostic {
        if case .bodyTooLong = self { return Diagnostic(.checksumMismatch, path: url, message) }
        if case .timedOut = self { return Diagnostic(.unreadableInput, path: url, words: Self.timedOutWords) }
        return Diagnostic(.unreadableInput, path: url, message)
    }

    /// A body longer than announced is refused; everything else is a failure that may pass.
    public var disposition: ErrorDisposition {
        if case .bodyTooLong = self { return .refused }
        return .failed
    }
}
