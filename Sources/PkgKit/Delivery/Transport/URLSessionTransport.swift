import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `HTTPTransport` over Foundation's `URLSession` (FoundationNetworking on Linux): one session
/// per transport, so connections are reused between requests; bodies are streamed to the
/// caller's handler as they arrive, never collected.
///
/// The idle timeout is enforced here, not left to the session: a request fails with
/// `.timedOut` when no byte (head or body) has arrived for `idleTimeout` seconds while its
/// handlers were ready for more, however long the whole transfer takes. Responses are never
/// cached, and `Accept-Encoding: identity` asks for the bytes as stored, so sizes and ranges
/// mean file bytes.
///
/// FoundationNetworking cannot pause a transfer; the session's delegate queue holds its network
/// thread back instead (`BoundedOperationQueue`), so a handler slower than the network slows the
/// transfer down rather than letting the body pile up in memory.
public final class URLSessionTransport: HTTPTransport, @unchecked Sendable {
    // @unchecked: every stored property is immutable; URLSession is thread-safe and the
    // router guards its own table with a lock.

    /// How the transport behaves.
    public struct Configuration: Sendable, Equatable {
        /// Seconds without any byte arriving, while the handlers keep up, after which a request
        /// fails with `.timedOut`.
        public var idleTimeout: TimeInterval
        /// The `User-Agent` header.
        public var userAgent: String

        /// A configuration; the idle timeout defaults to 30 seconds.
        public init(idleTimeout: TimeInterval = 30, userAgent: String = "PkgKit") {
            self.idleTimeout = idleTimeout
            self.userAgent = userAgent
        }
    }

    /// The configuration in force.
    public let configuration: Configuration
    private let session: URLSession
    private let router: TaskRouter
    /// The session's delegate queue: the network thread waits while it is full.
    let delegateQueue: BoundedOperationQueue

    /// The most delegate calls waiting at once: 256 chunks of at most 16 KiB, 4 MiB of body.
    static let maxQueuedCallbacks = 256

    /// A transport with its own session.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        sessionConfiguration.urlCache = nil
        sessionConfiguration.requestCachePolicy = .reloadIgnoringLocalCacheData
        // The idle watchdog below is the timeout; the session's own only backs it up.
        sessionConfiguration.timeoutIntervalForRequest = max(configuration.idleTimeout * 4, 600)
        sessionConfiguration.httpAdditionalHeaders = ["User-Agent": configuration.userAgent]
        let queue = BoundedOperationQueue(limit: Self.maxQueuedCallbacks, name: "PkgKit.URLSessionTransport")
        delegateQueue = queue
        router = TaskRouter()
        session = URLSession(configuration: sessionConfiguration, delegate: router, delegateQueue: queue)
    }

    deinit {
        // The session holds its delegate until it is invalidated.
        session.invalidateAndCancel()
    }

    /// GETs `request` over the session (see `HTTPTransport.get`), enforcing the idle timeout.
    public func get(_ request: HTTPRequest,
                    onResponse: @escaping @Sendable (HTTPResponseHead) throws -> Void,
                    onBody: @escaping @Sendable (Data) throws -> Void) async throws -> HTTPResponseHead {
        let scheme = request.url.scheme?.lowercased()
        guard scheme == "http" || scheme == "https" else { throw TransportError.unsupportedURL(request.url.absoluteString) }
        try Task.checkCancellation()
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = "GET"
        urlRequest.cachePolicy = .reloadIgnoringLocalCacheData
        urlRequest.timeoutInterval = max(configuration.idleTimeout * 4, 600)
        urlRequest.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        if let range = request.range { urlRequest.setValue(range.headerValue, forHTTPHeaderField: "Range") }
        let state = RequestState(request: request, idleTimeout: configuration.idleTimeout, deliveries: delegateQueue,
                                 onResponse: onResponse, onBody: onBody)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                state.start(continuation) {
                    let task = session.dataTask(with: urlRequest)
                    router.register(task.taskIdentifier, state)
                    return task
                }
            }
        } onCancel: {
            state.fail(CancellationError())
        }
    }
}

/// Hands the session's delegate calls to the state of the request they concern.
private final class TaskRouter: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked: `states` is only touched under `lock`.
    private let lock = NSLock()
    private var states: [Int: RequestState] = [:]

    func register(_ identifier: Int, _ state: RequestState) {
        lock.withLock { states[identifier] = state }
    }

    private func state(_ task: URLSessionTask) -> RequestState? {
        lock.withLock { states[task.taskIdentifier] }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        completionHandler(state(dataTask)?.received(response) ?? .cancel)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        state(dataTask)?.received(data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        let finished = lock.withLock { states.removeValue(forKey: task.taskIdentifier) }
        finished?.completed(error)
    }
}

/// One request in flight: its handlers, what arrived, and how it ends. Every delegate call for
/// one task comes from the session's serial queue; `fail` may come from any thread.
private final class RequestState: @unchecked Sendable {
    // @unchecked: every mutable field is guarded by `lock`; the handlers are called outside it,
    // from the session's serial delegate queue only.
    private let lock = NSLock()
    private let request: HTTPRequest
    private let idleTimeout: TimeInterval
    private let deliveries: BoundedOperationQueue
    private let onResponse: @Sendable (HTTPResponseHead) throws -> Void
    private let onBody: @Sendable (Data) throws -> Void

    private var continuation: CheckedContinuation<HTTPResponseHead, Error>?
    private var task: URLSessionDataTask?
    private var watchdog: DispatchSourceTimer?
    private var head: HTTPResponseHead?
    private var limit: Int64
    private var received: Int64 = 0
    private var failure: Error?
    private var finished = false
    private var lastActivity = DispatchTime.now().uptimeNanoseconds

    init(request: HTTPRequest, idleTimeout: TimeInterval, deliveries: BoundedOperationQueue,
         onResponse: @escaping @Sendable (HTTPResponseHead) throws -> Void, onBody: @escaping @Sendable (Data) throws -> Void) {
        self.request = request
        self.idleTimeout = idleTimeout
        self.deliveries = deliveries
        self.onResponse = onResponse
        self.onBody = onBody
        limit = request.maximumBodyBytes
    }

    private var url: String { request.url.absoluteString }

    /// Creates and resumes the task, unless the request was cancelled before it started.
    func start(_ continuation: CheckedContinuation<HTTPResponseHead, Error>, makeTask: () -> URLSessionDataTask) {
        lock.lock()
        if let failure {
            finished = true
            lock.unlock()
            continuation.resume(throwing: failure)
            return
        }
        self.continuation = continuation
        let task = makeTask()
        self.task = task
        let timer = DispatchSource.makeTimerSource(queue: .global())
        let tick = min(max(idleTimeout / 4, 0.05), 1)
        timer.schedule(deadline: .now() + tick, repeating: tick)
        timer.setEventHandler { [weak self] in self?.checkIdle() }
        watchdog = timer
        lastActivity = DispatchTime.now().uptimeNanoseconds
        lock.unlock()
        timer.resume()
        task.resume()
    }

    /// Stops the transfer with `error` (the first failure wins).
    func fail(_ error: Error) {
        let task: URLSessionDataTask? = lock.withLock {
            if failure == nil && !finished { failure = error }
            return self.task
        }
        task?.cancel()
    }

    private func checkIdle() {
        // `lastActivity` moves when the delegate queue hands a chunk over, not when it arrives.
        // While chunks wait in that queue (a handler slow to write; on Linux, an app whose threads
        // are all busy, as the queue, this timer and Swift's tasks share one thread per core), the
        // network was not the one keeping us waiting: the silence counts from when we catch up.
        if deliveries.isBehind {
            lock.withLock { lastActivity = DispatchTime.now().uptimeNanoseconds }
            return
        }
        let idle = lock.withLock { Double(DispatchTime.now().uptimeNanoseconds - lastActivity) / 1e9 }
        if idle > idleTimeout { fail(TransportError.timedOut(url: url)) }
    }

    func received(_ response: URLResponse) -> URLSession.ResponseDisposition {
        guard let http = response as? HTTPURLResponse else {
            fail(TransportError.failed(url: url, "not an HTTP response"))
            return .cancel
        }
        let status = http.statusCode
        guard status == 200 || status == 206 else {
            fail(TransportError.status(status, url: url))
            return .cancel
        }
        let length = http.value(forHTTPHeaderField: "Content-Length").flatMap { Int64($0.trimmingCharacters(in: .whitespaces)) }
        let head = HTTPResponseHead(statusCode: status, contentLength: length,
                                    contentRange: http.value(forHTTPHeaderField: "Content-Range").flatMap(ContentRange.init(headerValue:)),
                                    contentType: http.value(forHTTPHeaderField: "Content-Type"))
        let refused: Bool = lock.withLock {
            lastActivity = DispatchTime.now().uptimeNanoseconds
            self.head = head
            if let length { limit = min(limit, length) }
            return failure != nil
        }
        if refused { return .cancel }
        // The caller judges the head first: a 200 where a range was asked for is its to handle.
        do {
            try onResponse(head)
        } catch {
            fail(error)
            return .cancel
        }
        if let length, length > request.maximumBodyBytes {
            fail(TransportError.bodyTooLong(url: url, limit: request.maximumBodyBytes))
            return .cancel
        }
        return .allow
    }

    func received(_ data: Data) {
        let accepted: Bool = lock.withLock {
            guard failure == nil else { return false }
            lastActivity = DispatchTime.now().uptimeNanoseconds
            guard received + Int64(data.count) <= limit else { return false }
            received += Int64(data.count)
            return true
        }
        guard accepted else {
            // Past the bound (request's, or the head's own Content-Length): nothing more is handed on.
            fail(TransportError.bodyTooLong(url: url, limit: limit))
            return
        }
        do {
            try onBody(data)
        } catch {
            fail(error)
        }
    }

    func completed(_ error: Error?) {
        let outcome: (CheckedContinuation<HTTPResponseHead, Error>?, Result<HTTPResponseHead, Error>) = lock.withLock {
            finished = true
            watchdog?.cancel()
            watchdog = nil
            let continuation = self.continuation
            self.continuation = nil
            if let failure { return (continuation, .failure(failure)) }
            if let error {
                var mapped = Self.map(error, url: url)
                // libcurl's "transfer closed with N bytes remaining" arrives as an unknown error:
                // any failure once the head has arrived is a connection lost mid-body.
                if head != nil, case TransportError.failed = mapped {
                    mapped = TransportError.connectionLost(url: url, urlError(error))
                }
                return (continuation, .failure(mapped))
            }
            guard let head else { return (continuation, .failure(TransportError.failed(url: url, "no response"))) }
            if let length = head.contentLength, received < length {
                return (continuation, .failure(TransportError.connectionLost(url: url, "the body ended after \(received) of \(length) bytes")))
            }
            return (continuation, .success(head))
        }
        outcome.0?.resume(with: outcome.1)
    }

    private func urlError(_ error: Error) -> String {
        (error as? URLError)?.localizedDescription ?? "\(error)"
    }

    /// A URLSession error as a `TransportError`.
    static func map(_ error: Error, url: String) -> Error {
        guard let urlError = error as? URLError else { return TransportError.failed(url: url, "\(error)") }
        let detail = urlError.localizedDescription
        switch urlError.code {
        case .timedOut: return TransportError.timedOut(url: url)
        case .networkConnectionLost, .badServerResponse, .cannotParseResponse, .zeroByteResource, .unknown:
            return TransportError.connectionLost(url: url, detail)
        case .cannotConnectToHost, .notConnectedToInternet, .cannotFindHost, .dnsLookupFailed:
            return TransportError.cannotConnect(url: url, detail)
        case .cancelled: return CancellationError()
        case .unsupportedURL, .badURL: return TransportError.unsupportedURL(url)
        default: return TransportError.failed(url: url, detail)
        }
    }
}
