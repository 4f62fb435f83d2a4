#if canImport(AsyncHTTPClient)
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

/// `HTTPTransport` over AsyncHTTPClient (SwiftNIO): sync's HTTP client on Linux.
///
/// A response body is an `AsyncSequence` whose reader sets the pace: NIO reads from the socket
/// only while the body is being consumed, so a slow disk slows the server down through TCP and
/// never fills memory, and no thread of the process is ever blocked waiting for another.
/// Cancelling the reading task (or `HTTPBody.cancel()`) fails the request and closes its
/// connection at once. Chosen over FoundationNetworking by measurement (`bench/TRANSPORT.md`).
///
/// Responses are never decompressed or cached (`Accept-Encoding: identity`: sizes and ranges
/// mean file bytes); redirects are followed (a CDN may answer with one). The idle timeout is not
/// the client's: `HTTPTransport.get` enforces it on the clock it is given.
public struct AsyncHTTPClientTransport: HTTPTransport {
    /// The `User-Agent` header sent.
    public var userAgent: String

    /// A transport sending `userAgent`.
    public init(userAgent: String = "PkgKit/\(PkgKitVersion.current)") {
        self.userAgent = userAgent
    }

    /// One client for the process, never shut down: like `HTTPClient.shared`, but reading
    /// bodies as stored and leaving time-outs to the caller.
    private static let client: HTTPClient = {
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .follow(max: 10, allowCycles: false),
            timeout: .init(connect: .seconds(30), read: nil),
            decompression: .disabled)
        configuration.connectionPool.idleTimeout = .seconds(60)
        // A refused connection fails its request at once: retrying is the caller's `RetryPolicy`,
        // with its backoff, not a pool that keeps trying until the connect timeout.
        configuration.connectionPool.retryConnectionEstablishment = false
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }()

    /// Sends the GET; returns once the head has arrived.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let url = request.url.absoluteString
        let scheme = request.url.scheme?.lowercased()
        guard scheme == "http" || scheme == "https" else { throw TransportError.unsupportedURL(url) }
        var outgoing = HTTPClientRequest(url: url)
        outgoing.method = .GET
        outgoing.headers.add(name: "User-Agent", value: userAgent)
        outgoing.headers.add(name: "Accept-Encoding", value: "identity")
        if let range = request.range { outgoing.headers.add(name: "Range", value: range.headerValue) }
        let response: HTTPClientResponse
        do {
            response = try await Self.client.execute(outgoing, deadline: .distantFuture)
        } catch {
            throw Self.map(error, url: url)
        }
        let headers = response.headers
        let head = HTTPResponseHead(
            statusCode: Int(response.status.code),
            contentLength: headers.first(name: "Content-Length").flatMap { Int64($0.trimmingCharacters(in: .whitespaces)) },
            contentRange: headers.first(name: "Content-Range").flatMap(ContentRange.init(headerValue:)),
            contentType: headers.first(name: "Content-Type"))
        let body = ResponseBody(response.body, url: url)
        return HTTPResponse(head: head, body: HTTPBody(next: { try await body.next() }, cancel: { body.cancel() }))
    }

    /// AsyncHTTPClient's and NIO's errors as `TransportError`s (or `CancellationError`).
    static func map(_ error: any Error, url: String) -> any Error {
        if error is CancellationError { return error }
        if let error = error as? HTTPClientError {
            switch error {
            case .cancelled, .deadlineExceeded: return CancellationError()
            case .connectTimeout, .tlsHandshakeTimeout: return TransportError.cannotConnect(url: url, "\(error)")
            case .readTimeout: return TransportError.timedOut(url: url)
            case .remoteConnectionClosed, .bodyLengthMismatch: return TransportError.connectionLost(url: url, "\(error)")
            case .invalidURL, .emptyHost, .emptyScheme: return TransportError.unsupportedURL(url)
            default: return TransportError.failed(url: url, "\(error)")
            }
        }
        if let error = error as? IOError {
            switch error.errnoCode {
            case ECONNREFUSED, EHOSTUNREACH, ENETUNREACH, ETIMEDOUT:
                return TransportError.cannotConnect(url: url, error.description)
            default:
                return TransportError.connectionLost(url: url, error.description)
            }
        }
        if error is ChannelError || error is HTTPParserError {
            return TransportError.connectionLost(url: url, "\(error)")
        }
        let text = String(describing: error)
        // NIOPosix's connection failure (every address refused) is not a public type to match.
        if text.contains("NIOConnectionError") || text.contains("connectionRefused") {
            return TransportError.cannotConnect(url: url, text)
        }
        return TransportError.failed(url: url, text)
    }
}

/// One response body being read: its iterator, kept between `next` calls, and its cancellation.
/// Dropping the iterator ends the body's stream, which fails the request and closes its
/// connection: `cancel` drops it at once, or as soon as a `next` in progress returns.
private final class ResponseBody: @unchecked Sendable {
    // @unchecked: `iterator` and `cancelled` are only touched under `lock`; the iterator is taken
    // out for the length of one `next`, by the one task reading the body (HTTPBody's contract).
    private let lock = NSLock()
    private var iterator: HTTPClientResponse.Body.AsyncIterator?
    private var cancelled = false
    private let url: String

    init(_ body: HTTPClientResponse.Body, url: String) {
        iterator = body.makeAsyncIterator()
        self.url = url
    }

    func next() async throws -> Data? {
        guard var current = lock.withLock({ () -> HTTPClientResponse.Body.AsyncIterator? in
            defer { iterator = nil }
            return cancelled ? nil : iterator
        }) else { throw CancellationError() }
        let buffer: ByteBuffer?
        do {
            buffer = try await current.next()
        } catch {
            throw AsyncHTTPClientTransport.map(error, url: url)
        }
        guard let buffer else { return nil }
        lock.withLock { if !cancelled { iterator = current } }
        // The chunk's bytes stay in NIO's buffer (which the Data keeps alive): a package's every
        // byte copied once more on its way to the disk was a tenth of a full sync's download work.
        return buffer.getData(at: buffer.readerIndex, length: buffer.readableBytes, byteTransferStrategy: .noCopy) ?? Data()
    }

    func cancel() {
        lock.withLock {
            cancelled = true
            iterator = nil
        }
    }
}
#endif
