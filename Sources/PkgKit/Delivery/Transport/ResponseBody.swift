import PkgKitSupport
import PkgKitSupport

#if canImport(AsyncHTTPClient)
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

/// One response of `AsyncHTTPClientTransport`: its head, then its body parts as the client hands
/// them over, buffered up to `limit` bytes for the one task reading them (HTTPBody's contract),
/// and how it ended. Where it stands is a `ResponseBodyState`, behind a lock.
///
/// Why a delegate and not the client's async body: the async body asks the connection for more
/// only once the reader has taken the last part, from the reader's task. When the server closes
/// the connection, NIO reads everything the system still holds at once, whether asked or not,
/// and the client drops what arrives while no one has asked for it (a megabyte and more on
/// loopback). This delegate takes each part in the turn of the event loop that delivers it and
/// always asks for the next at once (its future is already complete), so nothing ever waits in
/// the client; the connection's `ReadGate` holds the socket back while `limit` bytes wait. When
/// the request fails, the reader still takes every buffered part before the failure is thrown.
/// A head that arrives without its connection's gate fails the request
/// (`AsyncHTTPClientAssumptions`): there is no second, silent way of holding the server back.
/// A body dropped unread ends its request (`HTTPBody` cancels when its last copy goes), so its
/// connection never stays held shut for a reader that is gone.
final class ResponseBody: HTTPClientResponseDelegate, Sendable {
    typealias Response = Void

    private let url: String
    private let state: LockedValue<ResponseBodyState>

    /// A body of `url` that buffers up to `limit` bytes ahead of its reader.
    init(url: String, limit: Int) {
        self.url = url
        state = LockedValue(ResponseBodyState(url: url, limit: limit))
    }

    /// Follows `task`, the request this delegate was given to: its end is the body's.
    func start(_ task: HTTPClient.Task<Void>) {
        let cancelNow = state.withLock { $0.started(task) }
        task.futureResult.whenComplete { self.finished($0) }
        if cancelNow { task.cancel() }
    }

    /// Waits for the response head; cancelling the waiting task cancels the request.
    func head() async throws -> NIOHTTP1.HTTPResponseHead {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (waiter: ResponseBodyState.HeadWaiter) in
                if let ready = state.withLock({ $0.waitForHead(waiter) }) { waiter.resume(with: ready) }
            }
        } onCancel: {
            cancel()
        }
    }

    /// The next part, in order, once it arrived; nil at the end of the body; the request's
    /// failure once every part that arrived before it was taken.
    func next() async throws -> Data? {
        let part: ByteBuffer?
        do {
            part = try await nextPart()
        } catch {
            throw AsyncHTTPClientTransport.map(error, url: url)
        }
        guard let part else { return nil }
        // The part's bytes stay in NIO's buffer (which the Data keeps alive): a package's every
        // byte copied once more on its way to the disk was a tenth of a full sync's download work.
        return part.getData(at: part.readerIndex, length: part.readableBytes, byteTransferStrategy: .noCopy) ?? Data()
    }

    private func nextPart() async throws -> ByteBuffer? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (waiter: ResponseBodyState.PartWaiter) in
                guard case .answer(let answer, let open) = state.withLock({ $0.take(waiter) }) else { return }
                if let open { Self.poke(open, for: self) }
                waiter.resume(with: answer)
            }
        } onCancel: {
            cancel()
        }
    }

    /// Lets `gate` read on, on its loop, if this body still has room by then.
    private static func poke(_ gate: NIOLoopBound<ReadGate>, for body: ResponseBody) {
        let id = ObjectIdentifier(body)
        onLoop(gate) { $0.poke(id) }
    }

    /// Lets `gate` read freely again: this body has ended. At once when on the loop (the
    /// request's end is), so that the connection is free before it carries another response.
    private static func detach(_ gate: NIOLoopBound<ReadGate>, from body: ResponseBody) {
        let id = ObjectIdentifier(body)
        onLoop(gate) { $0.detach(id) }
    }

    private static func onLoop(_ gate: NIOLoopBound<ReadGate>, _ work: @escaping @Sendable (ReadGate) -> Void) {
        if gate.eventLoop.inEventLoop {
            work(gate.value)
        } else {
            gate.eventLoop.execute { work(gate.value) }
        }
    }

    /// Ends the request at once, dropping its connection, unless it ended already (its
    /// connection then stays the client's to reuse); the reader's next call throws
    /// `CancellationError`. Any thread, any number of times.
    func cancel() {
        let (waiters, task) = state.withLock { ($0.cancel(), $0.task) }
        guard let waiters else { return }
        if let gate = waiters.gate { Self.detach(gate, from: self) }
        waiters.head?.resume(throwing: CancellationError())
        waiters.reader?.resume(throwing: CancellationError())
        task?.cancel()
    }

    /// The request ended: the reader gets what is buffered, then this.
    private func finished(_ result: Result<Void, any Error>) {
        let waiters = state.withLock { $0.finished(result) }
        if let gate = waiters.gate { Self.detach(gate, from: self) }
        let failure: any Error
        switch result {
        case .failure(let error): failure = error
        case .success: failure = TransportError.connectionLost(url: url, "the server sent no response")
        }
        waiters.head?.resume(throwing: failure)
        waiters.reader?.resume(with: result.map { Optional<ByteBuffer>.none })
    }

    func didReceiveHead(task: HTTPClient.Task<Void>, _ head: NIOHTTP1.HTTPResponseHead) -> EventLoopFuture<Void> {
        let gate: NIOLoopBound<ReadGate>
        do {
            gate = try AsyncHTTPClientAssumptions.gate(deliveringHeadOf: task, url: url)
        } catch {
            let waiters = state.withLock { $0.finished(.failure(error)) }
            waiters.head?.resume(throwing: error)
            task.fail(reason: error)
            return task.eventLoop.makeFailedFuture(error)
        }
        let (waiter, attach) = state.withLock { $0.received(head, gate: gate) }
        if attach {
            gate.value.attach(ObjectIdentifier(self)) { [weak self] in self?.state.withLock { $0.wantsMore } ?? true }
        }
        waiter?.resume(returning: head)
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Void>, _ part: ByteBuffer) -> EventLoopFuture<Void> {
        if case .handOver(let reader) = state.withLock({ $0.arrived(part) }) { reader.resume(returning: part) }
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didFinishRequest(task: HTTPClient.Task<Void>) throws {}
}
#endif
