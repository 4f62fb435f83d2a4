import PkgKitSupport

#if canImport(AsyncHTTPClient)
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import NIOPosix
import NIOSSL

/// `HTTPTransport` over AsyncHTTPClient (SwiftNIO): sync's HTTP client on Linux.
///
/// A response body is read ahead into a buffer of at most `readAhead` bytes, which the reader
/// empties at its own pace: the connection reads from its socket only while the buffer has room
/// (`ReadGate`), so a slow disk slows the server down through TCP and never fills memory, and no
/// thread of the process is ever blocked waiting for another. Every byte that reached the
/// machine reaches the reader, even when the server closes the connection early while the
/// reader is far behind: the reader takes what is buffered, and what the system held at the
/// close, before it sees the failure, so a resumed download asks for the first byte it does not
/// have (`ResponseBody` and `ReadGate` say why this needs the client's delegate API and a
/// handler of our own). Requests speak HTTP/1.1, whose connection is the body's one stream.
/// Cancelling the reading task (or `HTTPBody.cancel()`, or dropping the body unread) fails the
/// request and closes its connection at once. What this leans on in the client beyond its
/// documented behaviour is `AsyncHTTPClientAssumptions`, each point checked. Chosen over
/// FoundationNetworking by measurement (`bench/TRANSPORT.md`).
///
/// Responses are never decompressed or cached: `Accept-Encoding: identity` unless the request
/// accepts gzip (a catalog), whose body then arrives as sent, for the caller to decode within its
/// bound; redirects are followed (a CDN may answer with one). The idle timeout is not
/// the client's: `HTTPTransport.get` enforces it on the clock it is given.
///
/// HTTPS servers are verified against the system's trust store (`SystemTrustStore`: the one curl
/// and openssl use) plus the certificates `trust` adds. A certificate that does not verify is a
/// `TransportError.tls` that says why (`TLSDiagnosis`).
public struct AsyncHTTPClientTransport: HTTPTransport {
    /// The `User-Agent` header sent.
    public var userAgent: String
    /// The certificate authorities trusted besides the system's.
    public let trust: ServerTrust
    /// The TLS configuration of requests when `trust` adds certificates (else the client's
    /// own), or why it could not be made.
    private let tlsConfiguration: Result<TLSConfiguration, ServerTrustError>?

    /// A transport sending `userAgent`, trusting the system's store and `trust`'s certificates.
    public init(userAgent: String = "PkgKit/\(PkgKitVersion.current)", trust: ServerTrust = .system) {
        self.userAgent = userAgent
        self.trust = trust
        if trust.additionalCertificates.isEmpty {
            tlsConfiguration = nil
        } else {
            do {
                tlsConfiguration = .success(try SystemTrustStore.current().configuration(adding: trust))
            } catch {
                tlsConfiguration = .failure(ServerTrustError(path: "the added certificates", "the TLS library cannot load one of them"))
            }
        }
    }

    /// One client for the process, never shut down: like `HTTPClient.shared`, but reading
    /// bodies as stored and leaving time-outs to the caller.
    static let client: HTTPClient = {
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .follow(max: 10, allowCycles: false),
            timeout: .init(connect: .seconds(30), read: nil),
            decompression: .disabled)
        configuration.connectionPool.idleTimeout = .seconds(60)
        // A refused connection fails its request at once: retrying is the caller's `RetryPolicy`,
        // with its backoff, not a pool that keeps trying until the connect timeout.
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.tlsConfiguration = try? SystemTrustStore.current().configuration(adding: .system)
        AsyncHTTPClientAssumptions.installReadGates(&configuration)
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }()

    /// The event loop every request, and the connection it runs on, uses: the body's delegate
    /// is then called within the connection's delivery of the bytes (which is how it finds the
    /// connection's `ReadGate`: `AsyncHTTPClientAssumptions`), and takes every part in the turn
    /// of the loop that delivers it.
    static let loop: any EventLoop = client.eventLoopGroup.next()

    /// The most body bytes read ahead of the reader, per response (a little more when a read
    /// was under way as it filled, and what the system held when a connection closes). Bytes
    /// arriving while it is full wait in the system, which holds the server back; it is large
    /// enough that a reader that keeps up never fills it.
    package var readAhead = 2 << 20

    /// Sends the GET; returns once the head has arrived.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let url = request.url.absoluteString
        let scheme = request.url.scheme?.lowercased()
        guard scheme == "http" || scheme == "https" else { throw TransportError.unsupportedURL(url) }
        var headers = HTTPHeaders()
        headers.add(name: "User-Agent", value: userAgent)
        headers.add(name: "Accept-Encoding", value: request.acceptEncoding)
        if let range = request.range { headers.add(name: "Range", value: range.headerValue) }
        for (name, value) in request.validators?.requestHeaders ?? [] { headers.add(name: name, value: value) }
        let tls = try tlsConfiguration?.get()
        let body = ResponseBody(url: url, limit: readAhead)
        let head: NIOHTTP1.HTTPResponseHead
        do {
            let outgoing = try HTTPClient.Request(url: url, method: .GET, headers: headers, tlsConfiguration: tls)
            body.start(Self.client.execute(request: outgoing, delegate: body, eventLoop: AsyncHTTPClientAssumptions.placement(on: Self.loop)))
            head = try await body.head()
        } catch {
            throw await Self.diagnosed(Self.map(error, url: url), request.url)
        }
        let fields = head.headers
        let response = HTTPResponseHead(
            statusCode: Int(head.status.code),
            contentLength: fields.first(name: "Content-Length").flatMap { Int64($0.trimmingCharacters(in: .whitespaces)) },
            contentRange: fields.first(name: "Content-Range").flatMap(ContentRange.init(headerValue:)),
            contentType: fields.first(name: "Content-Type"),
            contentEncoding: fields.first(name: "Content-Encoding").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
                .flatMap { $0.isEmpty || $0 == "identity" ? nil : $0 },
            validators: HTTPValidators(etag: fields.first(name: "ETag"), lastModified: fields.first(name: "Last-Modified")))
        return HTTPResponse(head: response, body: HTTPBody(next: { try await body.next() }, cancel: { body.cancel() }))
    }

    /// A certificate that did not verify, with the reason found by asking the server again;
    /// any other error as it is.
    private static func diagnosed(_ error: any Error, _ url: URL) async -> any Error {
        guard let failure = error as? TransportError, case .tls(let link, let host, .unverified) = failure else { return error }
        let port = url.port ?? 443
        return TransportError.tls(url: link, host: host, await TLSDiagnosis.diagnose(host: host, port: port))
    }

    /// AsyncHTTPClient's, NIO's and the TLS library's errors as `TransportError`s (or
    /// `CancellationError`), in words: never a library's own text, an error number or a path.
    package static func map(_ error: any Error, url: String) -> any Error {
        if error is CancellationError || error is TransportError { return error }
        let host = URL(string: url)?.host ?? url
        if let failure = TLSDiagnosis.failure(of: error) {
            return TransportError.tls(url: url, host: host, failure)
        }
        if let error = error as? HTTPClientError {
            switch error {
            case .cancelled, .deadlineExceeded: return CancellationError()
            case .connectTimeout: return TransportError.cannotConnect(url: url, "timed out")
            case .tlsHandshakeTimeout: return TransportError.cannotConnect(url: url, "the TLS handshake timed out")
            case .readTimeout: return TransportError.timedOut(url: url)
            case .remoteConnectionClosed: return TransportError.connectionLost(url: url, "the server closed the connection")
            case .bodyLengthMismatch: return TransportError.connectionLost(url: url, "the body's length is not the one announced")
            case .invalidURL, .emptyHost, .emptyScheme: return TransportError.unsupportedURL(url)
            case .redirectLimitReached: return TransportError.failed(url: url, "the server redirects more than 10 times")
            case .redirectCycleDetected: return TransportError.failed(url: url, "the server's redirects go round in a circle")
            default: return TransportError.failed(url: url, "the HTTP exchange failed (\(plain(error)))")
            }
        }
        if let error = error as? NIOConnectionError {
            if error.connectionErrors.isEmpty, error.dnsAError != nil || error.dnsAAAAError != nil {
                return TransportError.cannotConnect(url: url, "no such host (\(host) does not resolve)")
            }
            let reason = error.connectionErrors.lazy.compactMap { ($0.error as? IOError).map(\.errnoCode) }.first
            return TransportError.cannotConnect(url: url, reason.map(words(errno:)) ?? "no address of \(host) answered")
        }
        if let error = error as? IOError {
            switch error.errnoCode {
            case ECONNREFUSED, EHOSTUNREACH, ENETUNREACH, ETIMEDOUT:
                return TransportError.cannotConnect(url: url, words(errno: error.errnoCode))
            default:
                return TransportError.connectionLost(url: url, words(errno: error.errnoCode))
            }
        }
        if error is ChannelError || error is HTTPParserError || error is NIOSSLError {
            return TransportError.connectionLost(url: url, "the connection failed (\(plain(error)))")
        }
        return TransportError.failed(url: url, "the HTTP exchange failed (\(plain(error)))")
    }

    /// A network error number in words (no number).
    package static func words(errno code: Int32) -> String {
        switch code {
        case ECONNREFUSED: return "connection refused"
        case ECONNRESET: return "the connection was reset"
        case EPIPE: return "the server closed the connection"
        case ECONNABORTED: return "the connection was aborted"
        case EHOSTUNREACH: return "no route to the host"
        case ENETUNREACH: return "the network is unreachable"
        case ENETDOWN: return "the network is down"
        case ETIMEDOUT: return "timed out"
        default: return String(cString: strerror(code)).lowercased()
        }
    }

    /// A library error's case name, no more (`readTimeout` of `HTTPClientError.readTimeout`),
    /// never its payload, which may hold error numbers, error stacks or source paths.
    package static func plain(_ error: any Error) -> String {
        let name = String(describing: error).prefix { $0.isLetter || $0.isNumber || $0 == "." || $0 == "_" }
        let last = name.split(separator: ".").last.map(String.init) ?? ""
        return last.isEmpty ? "an unexpected error" : last
    }
}

#endif
