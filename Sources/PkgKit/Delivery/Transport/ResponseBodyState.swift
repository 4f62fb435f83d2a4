import PkgKitSupport

#if canImport(AsyncHTTPClient)
import AsyncHTTPClient
import NIOCore
import NIOHTTP1

/// Where one `ResponseBody` stands, as an explicit state machine: waiting for its head,
/// streaming its body, ended with parts still to hand over, or cancelled. Each event (a call of
/// the reader's, or of the client's) moves it on and returns what to complete, which the body
/// does after letting its lock go. No state holds a field another state has no use for, so a
/// cancelled body cannot also hold a waiting reader, nor an ended one its connection's valve.
struct ResponseBodyState {
    /// A response head.
    typealias Head = NIOHTTP1.HTTPResponseHead
    /// The sender, waiting for the head.
    typealias HeadWaiter = CheckedContinuation<Head, any Error>
    /// The reader, waiting for the next part (nil: the end).
    typealias PartWaiter = CheckedContinuation<ByteBuffer?, any Error>

    /// The body parts that arrived and the reader has not taken yet.
    struct Buffer {
        /// The parts, in order.
        var parts = CircularBuffer<ByteBuffer>()
        /// Their bytes.
        var bytes = 0
    }

    /// A body being received.
    struct Streaming {
        /// Its head.
        var head: Head
        /// The valve of the connection it arrives on.
        var gate: NIOLoopBound<ReadGate>
        /// What arrived and waits for the reader.
        var buffer = Buffer()
        /// The reader, waiting on an empty buffer.
        var reader: PartWaiter?
    }

    private enum State {
        /// Nothing arrived yet; the sender may wait for the head.
        case awaitingHead(HeadWaiter?)
        /// The head arrived; parts arrive.
        case streaming(Streaming)
        /// The request ended (with its head, or before it): the reader takes what is buffered,
        /// then the outcome.
        case ended(head: Head?, Buffer, outcome: Result<Void, any Error>)
        /// The reader gave up: everything was dropped.
        case cancelled
        /// Only while an event changes the state in place (so the buffer is not copied).
        case modifying
    }

    private var state = State.awaitingHead(nil)
    /// The request, once the client accepted it (for cancelling it).
    private(set) var task: HTTPClient.Task<Void>?
    private let url: String
    private let limit: Int

    /// A body of `url` that buffers up to `limit` bytes ahead of its reader.
    init(url: String, limit: Int) {
        self.url = url
        self.limit = limit
    }

    /// The request was sent as `task`; true when it must be cancelled at once (the reader gave
    /// up before).
    mutating func started(_ task: HTTPClient.Task<Void>) -> Bool {
        self.task = task
        if case .cancelled = state { return true }
        return false
    }

    /// The sender asks for the head: it has it, or `waiter` waits (nil).
    mutating func waitForHead(_ waiter: HeadWaiter) -> Result<Head, any Error>? {
        switch state {
        case .awaitingHead(nil):
            state = .awaitingHead(waiter)
            return nil
        case .awaitingHead(.some):
            preconditionFailure("a response's head is waited for once")
        case .streaming(let streaming):
            return .success(streaming.head)
        case .ended(let head?, _, _):
            return .success(head)
        case .ended(nil, _, .failure(let error)):
            return .failure(error)
        case .ended(nil, _, .success):
            return .failure(noResponse)
        case .cancelled:
            return .failure(CancellationError())
        case .modifying:
            preconditionFailure()
        }
    }

    /// What the reader gets when it asks for a part, and whom that frees.
    enum Take {
        /// The reader waits for the next event.
        case wait
        /// The reader has its answer; `open` (the connection's valve, closed while the buffer
        /// was full) may let the connection read on.
        case answer(Result<ByteBuffer?, any Error>, open: NIOLoopBound<ReadGate>? = nil)
    }

    /// The reader asks for the next part: the oldest buffered one, the end, or `waiter` waits.
    mutating func take(_ waiter: PartWaiter) -> Take {
        switch state {
        case .awaitingHead:
            preconditionFailure("a body is read only once its head arrived")
        case .streaming(var streaming):
            state = .modifying
            defer { state = .streaming(streaming) }
            guard let part = streaming.buffer.parts.popFirst() else {
                streaming.reader = waiter
                return .wait
            }
            let before = streaming.buffer.bytes
            streaming.buffer.bytes -= part.readableBytes
            let reopens = before >= limit && streaming.buffer.bytes < limit
            return .answer(.success(part), open: reopens ? streaming.gate : nil)
        case .ended(let head, var buffer, let outcome):
            guard let part = buffer.parts.popFirst() else { return .answer(outcome.map { nil }) }
            state = .modifying
            buffer.bytes -= part.readableBytes
            state = .ended(head: head, buffer, outcome: outcome)
            return .answer(.success(part))
        case .cancelled:
            return .answer(.failure(CancellationError()))
        case .modifying:
            preconditionFailure()
        }
    }

    /// Whom an end (the request's or the reader's) leaves waiting, to be told.
    struct Waiters {
        /// The sender, still waiting for the head.
        var head: HeadWaiter?
        /// The reader, waiting on an empty buffer.
        var reader: PartWaiter?
        /// The connection's valve, to be let go.
        var gate: NIOLoopBound<ReadGate>?
    }

    /// The reader gave up: drops what is buffered; every waiter is to be failed, and the
    /// request ended unless it had (nil: it had, and its connection is the client's again).
    mutating func cancel() -> Waiters? {
        defer { state = .cancelled }
        switch state {
        case .awaitingHead(let waiter): return Waiters(head: waiter)
        case .streaming(let streaming): return Waiters(reader: streaming.reader, gate: streaming.gate)
        case .ended, .cancelled: return nil
        case .modifying: preconditionFailure()
        }
    }

    /// The request ended with `outcome`: the reader takes what is buffered first; the waiters
    /// are to be told.
    mutating func finished(_ outcome: Result<Void, any Error>) -> Waiters {
        switch state {
        case .awaitingHead(let waiter):
            state = .ended(head: nil, Buffer(), outcome: outcome)
            return Waiters(head: waiter)
        case .streaming(let streaming):
            state = .ended(head: streaming.head, streaming.buffer, outcome: outcome)
            // A reader only waits on an empty buffer.
            return Waiters(reader: streaming.reader, gate: streaming.gate)
        case .ended, .cancelled:
            return Waiters()
        case .modifying:
            preconditionFailure()
        }
    }

    /// The head arrived on a connection with valve `gate`: the sender waiting for it is to be
    /// told; true when the body is to attach itself to the gate.
    mutating func received(_ head: Head, gate: NIOLoopBound<ReadGate>) -> (waiter: HeadWaiter?, attach: Bool) {
        switch state {
        case .awaitingHead(let waiter):
            state = .streaming(Streaming(head: head, gate: gate))
            return (waiter, true)
        case .streaming, .ended, .cancelled:
            return (nil, false)
        case .modifying:
            preconditionFailure()
        }
    }

    /// What a part's arrival calls for.
    enum Arrival {
        /// Nothing: the part was buffered (or dropped, the body being cancelled).
        case buffered
        /// The waiting reader takes the part at once.
        case handOver(PartWaiter)
    }

    /// A part of the body arrived. The client never waits on the body: the connection's valve
    /// holds the socket back while the buffer is full.
    mutating func arrived(_ part: ByteBuffer) -> Arrival {
        guard case .streaming(var streaming) = state else { return .buffered }
        state = .modifying
        defer { state = .streaming(streaming) }
        if let reader = streaming.reader {
            streaming.reader = nil
            return .handOver(reader)
        }
        streaming.buffer.parts.append(part)
        streaming.buffer.bytes += part.readableBytes
        return .buffered
    }

    /// True while the buffer has room for more (what the connection's valve asks).
    var wantsMore: Bool {
        guard case .streaming(let streaming) = state else { return true }
        return streaming.buffer.bytes < limit
    }

    /// What a request that ended before its head says.
    private var noResponse: any Error { TransportError.connectionLost(url: url, "the server sent no response") }
}
#endif
