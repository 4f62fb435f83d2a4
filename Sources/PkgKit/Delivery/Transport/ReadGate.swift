#if canImport(AsyncHTTPClient)
import NIOCore
import NIOPosix

/// The valve of one HTTP/1.1 connection of `AsyncHTTPClientTransport`: the connection reads from
/// its socket only while the response body it carries has room in its read-ahead.
///
/// Why not the client's own back-pressure, a delegate future left pending: while that future is
/// pending, the client keeps what NIO still reads in a buffer of its own, and when the server's
/// FIN arrives NIO reads everything the system holds, asked or not; the client then fails the
/// request and drops that buffer. Those bytes had reached the machine, and the resumed download
/// fetched them again. With the valve, the body takes every part the moment it arrives, so
/// nothing ever waits inside the client, and the connection is held back below the client
/// instead, by not asking the socket for more. At a FIN, what the system held goes past the
/// read-ahead into the body's buffer (no more than the system's receive buffer), and the
/// failure comes after it.
///
/// The gate sits first in the connection's pipeline (below TLS), so every `read` the client's
/// handlers ask for passes it. A body attaches itself when its response head arrives
/// (`current` is the gate delivering that head) and detaches when it ends; the connection,
/// idle or between responses, reads as it would without the gate. How the client is made to
/// install it and to deliver heads where `current` finds it is `AsyncHTTPClientAssumptions`.
/// Touched only on the connection's event loop.
final class ReadGate: ChannelDuplexHandler, RemovableChannelHandler {
    /// A gate that lets every read through until a body attaches.
    package init() {}

    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// The gate whose connection is delivering bytes on this thread right now, if any: how a
    /// body called within that delivery finds the connection it arrives on (the client offers no
    /// other way).
    package static var current: ReadGate? { delivering.currentValue }
    // nonisolated(unsafe): a thread-specific variable; each thread sees only the gate it set.
    nonisolated(unsafe) private static let delivering = ThreadSpecificVariable<ReadGate>()

    private var context: ChannelHandlerContext?
    /// The body attached, and whether it wants more bytes now.
    private var owner: (id: ObjectIdentifier, wantsMore: @Sendable () -> Bool)?
    /// A `read` held back because the body had no room.
    private var readHeld = false

    /// The loop of the connection the gate is in, while it is in one.
    var eventLoop: (any EventLoop)? { context?.eventLoop }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        delivering { context.fireChannelRead(data) }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        // TLS hands its plaintext on here too.
        delivering { context.fireChannelReadComplete() }
    }

    package func read(context: ChannelHandlerContext) {
        if let owner, !owner.wantsMore() {
            readHeld = true
        } else {
            context.read()
        }
    }

    /// From now on the connection reads only while `wantsMore` says so; `id` names the body.
    func attach(_ id: ObjectIdentifier, wantsMore: @escaping @Sendable () -> Bool) {
        owner = (id, wantsMore)
    }

    /// The body `id` may want more: a `read` held back goes on if it does.
    func poke(_ id: ObjectIdentifier) {
        guard owner?.id == id else { return }
        resumeIfWanted()
    }

    /// The body `id` ended: the connection reads freely again.
    func detach(_ id: ObjectIdentifier) {
        guard owner?.id == id else { return }
        owner = nil
        resumeIfWanted()
    }

    private func resumeIfWanted() {
        guard readHeld, owner?.wantsMore() ?? true else { return }
        readHeld = false
        context?.read()
    }

    private func delivering(_ body: () -> Void) {
        let outer = Self.delivering.currentValue
        Self.delivering.currentValue = self
        body()
        Self.delivering.currentValue = outer
    }
}
#endif
