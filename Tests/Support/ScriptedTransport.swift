import Foundation
import PkgKit

/// An in-memory `HTTPTransport` that answers each request with a scripted reply: a head, then
/// body steps (bytes, a pause on a `ManualClock`, a stall until cancelled, a broken
/// connection). Sync logic (plans, retries, resume, deltas, cut-offs, cancellation) is tested
/// against it with no socket, no sleep and no wall-clock timeout. It records every exchange:
/// the request, the body bytes handed over, and whether the reader cancelled the body (what a
/// real transport does by dropping the connection).
public final class ScriptedTransport: HTTPTransport, @unchecked Sendable {
    // @unchecked: every mutable field is guarded by `lock`.

    /// One step of a reply.
    public enum Step: Sendable {
        /// These bytes, handed over in chunks of the transport's `chunkSize`.
        case bytes(Data)
        /// Silence for this long on the transport's clock, then the next step.
        case pause(Duration)
        /// Silence until the transfer is cancelled.
        case stall
        /// The connection breaks: the reader gets this error.
        case fail(TransportError)
    }

    /// A reply: the head (nil when the request fails or stalls before one arrives) and the body.
    public struct Reply: Sendable {
        /// The status and headers, or nil when `steps` decide what happens before any head.
        public var head: HTTPResponseHead?
        /// The body (or, with no head, what happens instead of one).
        public var steps: [Step]

        /// A reply with `head` and these body steps.
        public init(head: HTTPResponseHead?, steps: [Step] = []) {
            self.head = head
            self.steps = steps
        }

        /// A status with an empty body (404, 503…).
        public static func status(_ code: Int) -> Reply {
            Reply(head: HTTPResponseHead(statusCode: code, contentLength: 0))
        }

        /// `data` served as a web server that honours Range serves it: 200 with all of it, 206
        /// with the range asked for, 416 for a range past its end.
        public static func serving(_ data: Data, for request: HTTPRequest, contentType: String? = nil) -> Reply {
            let size = Int64(data.count)
            guard let range = request.range else {
                return Reply(head: HTTPResponseHead(statusCode: 200, contentLength: size, contentType: contentType), steps: [.bytes(data)])
            }
            guard range.lowerBound < size else { return .status(416) }
            let upper = min(range.upperBound ?? size, size)
            return Reply(head: HTTPResponseHead(statusCode: 206, contentLength: upper - range.lowerBound,
                                                contentRange: ContentRange(first: range.lowerBound, last: upper - 1, total: size),
                                                contentType: contentType),
                         steps: [.bytes(data.subdata(in: Int(range.lowerBound) ..< Int(upper)))])
        }
    }

    /// One request and what became of it.
    public struct Exchange: Sendable {
        /// The request.
        public var request: HTTPRequest
        /// The status answered, nil when no head was sent.
        public var status: Int?
        /// Body bytes handed to the reader.
        public var bytesSent: Int64 = 0
        /// True when the reader cancelled the body before its end (a dropped connection).
        public var cancelled = false
        /// True when the reader reached the body's end.
        public var completed = false
    }

    /// The clock pauses are slept on.
    public let clock: ManualClock
    /// The largest chunk handed over at once.
    public let chunkSize: Int
    private let respond: @Sendable (HTTPRequest) -> Reply
    private let lock = NSLock()
    private var log: [Exchange] = []
    private var stallCount = 0
    private var stallWatchers: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

    /// A transport answering each request with `respond(request)`.
    public init(clock: ManualClock = ManualClock(), chunkSize: Int = 16 << 10, respond: @escaping @Sendable (HTTPRequest) -> Reply) {
        self.clock = clock
        self.chunkSize = chunkSize
        self.respond = respond
    }

    /// A transport serving the files under `root` at any URL whose path, relative to `base`'s,
    /// names one (404 otherwise), honouring Range; `alter` may change each reply (a fault).
    public convenience init(serving root: String, base: URL, clock: ManualClock = ManualClock(), chunkSize: Int = 16 << 10,
                            alter: (@Sendable (HTTPRequest, Reply) -> Reply)? = nil) {
        let basePath = base.path.hasSuffix("/") ? base.path : base.path + "/"
        self.init(clock: clock, chunkSize: chunkSize) { request in
            let path = request.url.path
            var reply = Reply.status(404)
            if path.hasPrefix(basePath), !path.split(separator: "/").contains(".."),
               let data = FileManager.default.contents(atPath: root + "/" + path.dropFirst(basePath.count)) {
                reply = .serving(data, for: request)
            }
            return alter?(request, reply) ?? reply
        }
    }

    /// Every exchange so far, in order.
    public var exchanges: [Exchange] { lock.withLock { log } }

    /// The exchanges whose URL path ends in `name`.
    public func exchanges(for name: String) -> [Exchange] {
        exchanges.filter { $0.request.url.path.hasSuffix("/" + name) }
    }

    /// Returns once `count` transfers in all have reached a `.stall` step.
    public func stalls(atLeast count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            lock.lock()
            if stallCount >= count {
                lock.unlock()
                continuation.resume()
            } else {
                stallWatchers.append((count, continuation))
                lock.unlock()
            }
        }
    }

    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        try Task.checkCancellation()
        let reply = respond(request)
        let index: Int = lock.withLock {
            log.append(Exchange(request: request, status: reply.head?.statusCode))
            return log.count - 1
        }
        let body = ScriptedBody(transport: self, exchange: index, steps: reply.steps)
        guard let head = reply.head else {
            // No head: the steps run until they fail (or stall, or end as a lost connection).
            while try await body.next() != nil {}
            throw TransportError.connectionLost(url: request.url.absoluteString, "the connection closed before a response")
        }
        return HTTPResponse(head: head, body: HTTPBody(next: { try await body.next() }, cancel: { body.cancel() }))
    }

    fileprivate func update(_ index: Int, _ change: (inout Exchange) -> Void) {
        lock.withLock { change(&log[index]) }
    }

    fileprivate func stalled() {
        let ready: [CheckedContinuation<Void, Never>] = lock.withLock {
            stallCount += 1
            let ready = stallWatchers.filter { $0.count <= stallCount }.map(\.continuation)
            stallWatchers.removeAll { $0.count <= stallCount }
            return ready
        }
        ready.forEach { $0.resume() }
    }
}

/// One scripted body being read.
private final class ScriptedBody: @unchecked Sendable {
    // @unchecked: every mutable field is guarded by `lock`.
    private let transport: ScriptedTransport
    private let exchange: Int
    private let lock = NSLock()
    private var steps: [ScriptedTransport.Step]
    private var cancelled = false
    private var stall: CheckedContinuation<Void, Error>?

    init(transport: ScriptedTransport, exchange: Int, steps: [ScriptedTransport.Step]) {
        self.transport = transport
        self.exchange = exchange
        self.steps = steps
    }

    func next() async throws -> Data? {
        while true {
            try Task.checkCancellation()
            let step: ScriptedTransport.Step? = try lock.withLock {
                if cancelled { throw CancellationError() }
                return steps.isEmpty ? nil : steps.removeFirst()
            }
            switch step {
            case nil:
                transport.update(exchange) { $0.completed = true }
                return nil
            case .bytes(let data)?:
                guard !data.isEmpty else { continue }
                let chunk = data.prefix(transport.chunkSize)
                if chunk.count < data.count { lock.withLock { steps.insert(.bytes(data.dropFirst(chunk.count)), at: 0) } }
                transport.update(exchange) { $0.bytesSent += Int64(chunk.count) }
                return Data(chunk)
            case .pause(let duration)?:
                try await transport.clock.sleep(for: duration)
            case .fail(let error)?:
                throw error
            case .stall?:
                try await withTaskCancellationHandler {
                    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Error>) in
                        let over: Bool = lock.withLock {
                            if cancelled || Task.isCancelled { return true }
                            stall = continuation
                            return false
                        }
                        if over { continuation.resume(throwing: CancellationError()) } else { transport.stalled() }
                    }
                } onCancel: {
                    cancel()
                }
            }
        }
    }

    func cancel() {
        let waiting: CheckedContinuation<Void, Error>? = lock.withLock {
            cancelled = true
            defer { stall = nil }
            return stall
        }
        // A body read to its end is also cancelled when it is dropped: that drops nothing.
        transport.update(exchange) { if !$0.completed { $0.cancelled = true } }
        waiting?.resume(throwing: CancellationError())
    }
}
