#if os(Linux)
import NIOCore
import NIOEmbedded
import Testing
@testable import PkgKit
@testable import PkgKitTransport

/// The valve that holds an HTTP connection back while its body's read-ahead is full, on an
/// embedded channel: which reads reach the socket, and how a body finds its connection's gate.
/// (`ResumeAfterCutTests` and `HTTPTransportSocketTests.aSlowReaderHoldsTheServerBack` show what
/// it is for, over real sockets.)
@Suite struct ReadGateTests {
    private let channel = EmbeddedChannel()
    private let socket = ReadsAtTheSocket()
    private let gate = ReadGate()
    private let room = Room()
    private let body = Body()

    init() throws {
        // The socket's side first: the counter sees only the reads the gate lets through.
        try channel.pipeline.syncOperations.addHandlers([socket, gate])
    }

    @Test func readsPassUntilABodyAttaches() {
        channel.read()
        channel.read()
        #expect(socket.reads == 2)
    }

    @Test func aFullBodyHoldsTheReadUntilItHasRoomAgain() {
        gate.attach(ObjectIdentifier(body), wantsMore: room.check)
        room.set(false)
        channel.read()
        #expect(socket.reads == 0, "the body has no room: the socket must not be asked")
        gate.poke(ObjectIdentifier(body))
        #expect(socket.reads == 0, "a poke while the body is still full lets nothing through")
        room.set(true)
        gate.poke(ObjectIdentifier(body))
        #expect(socket.reads == 1, "the held read goes on once the body has room")
        gate.poke(ObjectIdentifier(body))
        #expect(socket.reads == 1, "one held read is passed on once")
    }

    @Test func aBodyThatEndsFreesTheConnection() {
        gate.attach(ObjectIdentifier(body), wantsMore: room.check)
        room.set(false)
        channel.read()
        gate.detach(ObjectIdentifier(body))
        #expect(socket.reads == 1, "the held read goes on when the body ends, full or not")
        channel.read()
        #expect(socket.reads == 2, "an idle connection reads freely")
    }

    @Test func anEarlierBodyCannotOpenOrFreeTheNextOnesConnection() {
        let earlier = Body()
        gate.attach(ObjectIdentifier(earlier), wantsMore: { true })
        gate.attach(ObjectIdentifier(body), wantsMore: room.check)
        room.set(false)
        channel.read()
        gate.poke(ObjectIdentifier(earlier))
        gate.detach(ObjectIdentifier(earlier))
        #expect(socket.reads == 0)
    }

    @Test func aBodyFindsTheGateDeliveringItsBytes() throws {
        let seen = SeenGate()
        try channel.pipeline.syncOperations.addHandler(seen)
        #expect(ReadGate.current == nil)
        try channel.writeInbound(ByteBuffer(string: "HTTP/1.1 200 OK\r\n"))
        channel.pipeline.fireChannelReadComplete()
        #expect(seen.duringRead === gate && seen.duringReadComplete === gate)
        #expect(ReadGate.current == nil, "only while the gate's connection delivers")
    }
}

/// Counts the reads that reach the socket.
private final class ReadsAtTheSocket: ChannelOutboundHandler {
    typealias OutboundIn = ByteBuffer
    var reads = 0

    func read(context: ChannelHandlerContext) {
        reads += 1
        context.read()
    }
}

/// Records `ReadGate.current` where the HTTP client's handlers would be.
private final class SeenGate: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    var duringRead: ReadGate?
    var duringReadComplete: ReadGate?

    func channelRead(context: ChannelHandlerContext, data: NIOAny) { duringRead = ReadGate.current }
    func channelReadComplete(context: ChannelHandlerContext) { duringReadComplete = ReadGate.current }
}

/// Whether the body has room, as the gate asks it.
private final class Room: @unchecked Sendable {
    // @unchecked: the tests run on one thread, the embedded channel's.
    private var value = true
    func set(_ value: Bool) { self.value = value }
    @Sendable func check() -> Bool { value }
}

/// Stands for a response body: only its identity counts.
private final class Body {}
#endif
