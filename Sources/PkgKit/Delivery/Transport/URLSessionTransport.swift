import PkgKitSupport

// Apple platforms only. On Linux, URLSession lives in FoundationNetworking, which would link
// libcurl and its thirty-odd libraries into every program that uses PkgKit, for a client that
// cannot hold a server back (bench/TRANSPORT.md); Linux has `AsyncHTTPClientTransport`.
#if !os(Linux)
import Foundation

/// `HTTPTransport` over Foundation's `URLSession`: sync's HTTP client on Apple platforms. One
/// session per transport, so connections are reused between requests; responses are never
/// cached, and `Accept-Encoding: identity` asks for the bytes as stored, unless the request accepts
/// gzip (a catalog). URLSession then decodes the body itself, before this transport sees it: the
/// head reports no `contentEncoding` and no `Content-Length` (which counted the encoded bytes), the
/// body bound applies to decoded bytes, and bytes counted are decoded bytes. A `ServerTrust`'s
/// certificates are anchors beside the system's when a server's certificate is judged
/// (`ServerTrustChallenge`). Not run here: this file builds on Apple platforms only, and has not
/// yet been run on a device.
///
/// The session's delegate puts each chunk that arrives into a small buffer that the body's
/// reader drains. When the buffer passes `bufferLimit`, the task is suspended until the reader
/// catches up, so a slow disk never lets a body pile up in memory.
public final class URLSessionTransport: HTTPTransport, Sendable {

    /// Body bytes a response may hold before the transfer is held back: 4 MiB.
    public static let bufferLimit = 4 << 20

    private let session: URLSession
    private let router: TaskRouter

    /// A transport with its own session, sending `userAgent`, trusting the servers whose
    /// certificates lead to the system's authorities or to `trust`'s.
    public init(trust: ServerTrust = .system, userAgent: String = "PkgKit/\(PkgKitVersion.current)") {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        // The idle timeout is enforced above every transport, on the caller's clock.
        configuration.timeoutIntervalForRequest = 7 * 24 * 3600
        configuration.timeoutIntervalForResource = 7 * 24 * 3600
        configuration.httpAdditionalHeaders = ["User-Agent": userAgent]
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        queue.name = "PkgKit.URLSessionTransport"
        router = TaskRouter(trust: trust)
        session = URLSession(configuration: configuration, delegate: router, delegateQueue: queue)
    }

    deinit {
        // The session holds its delegate until it is invalidated.
        session.invalidateAndCancel()
    }

    /// Sends the GET; returns once the head has arrived.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let scheme = request.url.scheme?.lowercased()
        guard scheme == "http" || scheme == "https" else { throw TransportError.unsupportedURL(request.url.absoluteString) }
        try Task.checkCancellation()
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = "GET"
        urlRequest.cachePolicy = .reloadIgnoringLocalCacheData
        urlRequest.setValue(request.acceptEncoding, forHTTPHeaderField: "Accept-Encoding")
        if let range = request.range { urlRequest.setValue(range.headerValue, forHTTPHeaderField: "Range") }
        for (name, value) in request.validators?.requestHeaders ?? [] { urlRequest.setValue(value, forHTTPHeaderField: name) }
        let transfer = SessionTransfer(url: request.url.absoluteString)
        let task = session.dataTask(with: urlRequest)
        transfer.task = task
        router.register(task.taskIdentifier, transfer)
        let head = try await withTaskCancellationHandler {
            try await transfer.head(starting: task)
        } onCancel: {
            transfer.cancel()
        }
        return HTTPResponse(head: head, body: HTTPBody(next: { try await transfer.next() }, cancel: { transfer.cancel() }))
    }
}

/// Hands the session's delegate calls to the transfer they concern.
private final class TaskRouter: NSObject, URLSessionDataDelegate, Sendable {
    /// The transfers under way, by their task's identifier.
    private let transfers = LockedValue<[Int: SessionTransfer]>([:])
    /// The certificates trusted besides the system's.
    private let trust: ServerTrust

    /// A router that judges servers' certificates under `trust`.
    init(trust: ServerTrust) {
        self.trust = trust
        super.init()
    }

    func register(_ identifier: Int, _ transfer: SessionTransfer) {
        transfers.withLock { $0[identifier] = transfer }
    }

    private func transfer(_ task: URLSessionTask) -> SessionTransfer? {
        transfers.withLock { $0[task.taskIdentifier] }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        completionHandler(transfer(dataTask)?.received(response) ?? .cancel)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        transfer(dataTask)?.received(data)
    }

    /// A server-trust challenge answered under `trust` (`ServerTrustChallenge`); others as the system answers them.
    func urlSession(_ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
                    completionHandler: @escaping (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
        let answer = ServerTrustChallenge.answer(challenge, trust: trust)
        // The refusal is the transfer's failure, before the cancelled task says "cancelled".
        if let refused = answer.refused { transfer(task)?.untrusted(refused, host: challenge.protectionSpace.host) }
        completionHandler(answer.disposition, answer.credential)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        let finished = transfers.withLock { $0.removeValue(forKey: task.taskIdentifier) }
        finished?.completed(error)
    }
}

/// One transfer: the head awaited by `send`, then a buffer of body chunks between the session's
/// delegate (producer) and the body's reader (consumer).
// Unchecked: owns a lock (`condition`), which guards every mutable field, and the session's task.
private final class SessionTransfer: @unchecked Sendable {
    private let condition = NSCondition()
    private let url: String
    var task: URLSessionDataTask?
    private var headWaiter: CheckedContinuation<HTTPResponseHead, Error>?
    private var head: HTTPResponseHead?
    private var chunks: [Data] = []
    private var buffered = 0
    private var bodyWaiter: CheckedContinuation<Data?, Error>?
    private var ended = false
    private var failure: Error?
    private var suspended = false

    init(url: String) { self.url = url }

    func head(starting task: URLSessionDataTask) async throws -> HTTPResponseHead {
        try await withCheckedThrowingContinuation { continuation in
            condition.lock()
            if let failure {
                condition.unlock()
                continuation.resume(throwing: failure)
                return
            }
            headWaiter = continuation
            condition.unlock()
            task.resume()
        }
    }

    func received(_ response: URLResponse) -> URLSession.ResponseDisposition {
        guard let http = response as? HTTPURLResponse else {
            fail(TransportError.failed(url: url, "not an HTTP response"))
            return .cancel
        }
        // URLSession decodes a compressed body itself; its Content-Length counted the encoded bytes.
        let encoded = !["", "identity"].contains((http.value(forHTTPHeaderField: "Content-Encoding") ?? "").lowercased())
        let head = HTTPResponseHead(
            statusCode: http.statusCode,
            contentLength: encoded ? nil : http.value(forHTTPHeaderField: "Content-Length").flatMap { Int64($0.trimmingCharacters(in: .whitespaces)) },
            contentRange: http.value(forHTTPHeaderField: "Content-Range").flatMap(ContentRange.init(headerValue:)),
            contentType: http.value(forHTTPHeaderField: "Content-Type"),
            validators: HTTPValidators(etag: http.value(forHTTPHeaderField: "ETag"),
                                       lastModified: http.value(forHTTPHeaderField: "Last-Modified")))
        let waiter: CheckedContinuation<HTTPResponseHead, Error>? = condition.withLock {
            self.head = head
            defer { headWaiter = nil }
            return headWaiter
        }
        waiter?.resume(returning: head)
        return waiter == nil ? .cancel : .allow
    }

    func received(_ data: Data) {
        condition.lock()
        guard failure == nil, !ended else {
            condition.unlock()
            return
        }
        if let waiter = bodyWaiter {
            bodyWaiter = nil
            condition.unlock()
            waiter.resume(returning: data)
            return
        }
        chunks.append(data)
        buffered += data.count
        guard buffered > URLSessionTransport.bufferLimit else {
            condition.unlock()
            return
        }
        suspended = true
        condition.unlock()
        task?.suspend()
    }

    func completed(_ error: Error?) {
        let mapped = error.map { Self.map($0, url: url, afterHead: condition.withLock { head != nil }) }
        finish(mapped)
    }

    /// The next chunk, nil at the end.
    func next() async throws -> Data? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Data?, Error>) in
                condition.lock()
                if !chunks.isEmpty {
                    let chunk = chunks.removeFirst()
                    buffered -= chunk.count
                    let resume = suspended && buffered <= URLSessionTransport.bufferLimit / 2
                    if resume { suspended = false }
                    condition.broadcast()
                    condition.unlock()
                    if resume { task?.resume() }
                    continuation.resume(returning: chunk)
                } else if let failure {
                    condition.unlock()
                    continuation.resume(throwing: failure)
                } else if ended {
                    condition.unlock()
                    continuation.resume(returning: nil)
                } else {
                    bodyWaiter = continuation
                    condition.unlock()
                }
            }
        } onCancel: {
            cancel()
        }
    }

    /// Ends the transfer: the task is cancelled off the delegate's queue (this may be called on
    /// it, and a cancel must not wait for the queue it runs on), and every waiter is woken.
    func cancel() {
        fail(CancellationError())
        let task = self.task
        DispatchQueue.global().async { task?.cancel() }
    }

    /// The server's certificate was not trusted: the transfer fails with why.
    func untrusted(_ failure: TLSFailure, host: String) {
        fail(TransportError.tls(url: url, host: host, failure))
    }

    private func fail(_ error: Error) {
        finish(error)
    }

    private func finish(_ error: Error?) {
        condition.lock()
        if ended || failure != nil {
            condition.unlock()
            return
        }
        if let error {
            failure = error
            // Nothing more is read once the transfer failed.
            chunks.removeAll()
            buffered = 0
        } else {
            ended = true
        }
        let headWaiter = self.headWaiter, bodyWaiter = self.bodyWaiter
        self.headWaiter = nil
        self.bodyWaiter = nil
        condition.broadcast()
        condition.unlock()
        if let headWaiter {
            headWaiter.resume(throwing: error ?? TransportError.failed(url: url, "no response"))
        }
        if let bodyWaiter {
            if let error { bodyWaiter.resume(throwing: error) } else { bodyWaiter.resume(returning: nil) }
        }
    }

    /// A URLSession error as a `TransportError` (or `CancellationError`).
    static func map(_ error: Error, url: String, afterHead: Bool) -> Error {
        guard let urlError = error as? URLError else { return TransportError.failed(url: url, "\(error)") }
        let detail = urlError.localizedDescription
        switch urlError.code {
        case .cancelled: return CancellationError()
        case .timedOut: return TransportError.timedOut(url: url)
        case .networkConnectionLost, .badServerResponse, .cannotParseResponse, .zeroByteResource, .unknown:
            return TransportError.connectionLost(url: url, detail)
        case .cannotConnectToHost, .notConnectedToInternet, .cannotFindHost, .dnsLookupFailed:
            return TransportError.cannotConnect(url: url, detail)
        case .unsupportedURL, .badURL: return TransportError.unsupportedURL(url)
        case .serverCertificateUntrusted, .serverCertificateHasUnknownRoot:
            return TransportError.tls(url: url, host: URL(string: url)?.host ?? url, .unknownIssuer)
        case .serverCertificateHasBadDate, .serverCertificateNotYetValid:
            return TransportError.tls(url: url, host: URL(string: url)?.host ?? url, .unverified)
        default:
            // Any failure once the head has arrived is a connection lost mid-body.
            return afterHead ? TransportError.connectionLost(url: url, detail) : TransportError.failed(url: url, detail)
        }
    }
}
#endif
