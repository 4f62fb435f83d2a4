import Foundation
import PkgKit
import Testing
import TestSupport

/// The real HTTP transports over real sockets, against the fault server on loopback: what only a
/// socket shows (parsing, ranges, a connection really dropped, a stall on the wire, a body with
/// no length ending at close). Time-outs run on a manual clock. The logic above the transports
/// is tested in memory (`GuardedTransferTests`, `ResumableDownloadTests`, the sync suites).
@Suite(.timeLimit(.minutes(2))) struct HTTPTransportSocketTests {
    /// The HTTP transport this platform ships, by name. (On Linux PkgKit leaves URLSession out:
    /// FoundationNetworking would link libcurl into every program using PkgKit.)
    static var transports: [String] {
        #if os(Linux)
        ["AsyncHTTPClient"]
        #else
        ["URLSession"]
        #endif
    }

    static func transport(_ name: String) -> any HTTPTransport {
        #if os(Linux)
        AsyncHTTPClientTransport()
        #else
        URLSessionTransport()
        #endif
    }

    let folder: Scratch
    let server: FaultHTTPServer
    let package = pseudoRandomData(700_000, seed: 5)

    init() throws {
        folder = try Scratch()
        try folder.write("site/p.pkg", package)
        server = try FaultHTTPServer(root: folder.path("site"))
    }

    func get(_ transport: any HTTPTransport, range: ByteRange? = nil, limit: Int64? = nil, clock: ManualClock = ManualClock(),
             into body: ReceivedBody = ReceivedBody()) async throws -> HTTPResponseHead {
        try await transport.get(HTTPRequest(url: server.url("p.pkg"), range: range, maximumBodyBytes: limit ?? Int64(package.count)),
                                policy: TransferPolicy(clock: clock), onResponse: { _ in }, onBody: { body.append($0) })
    }

    @Test(arguments: transports)
    func wholeFilesAndRangesArriveByteForByte(name: String) async throws {
        defer { server.stop() }
        let transport = Self.transport(name)
        let whole = ReceivedBody()
        let head = try await get(transport, into: whole)
        #expect(head.statusCode == 200 && head.contentLength == Int64(package.count))
        #expect(whole.data == package)
        let part = ReceivedBody()
        let partial = try await get(transport, range: ByteRange(100 ..< 70_100), into: part)
        #expect(partial.statusCode == 206)
        #expect(partial.contentRange == ContentRange(first: 100, last: 70_099, total: Int64(package.count)))
        #expect(part.data == package.subdata(in: 100 ..< 70_100))
        #expect(server.log.map(\.range) == [nil, "bytes=100-70099"])
    }

    /// Issue 19's repro: the package, then more, with no Content-Length (HTTP/1.0, the body ends
    /// when the connection closes). Refused at once, the connection dropped, no hang. The extra is
    /// 32 MiB, more than the socket buffers on both sides and the client's read-ahead can take in,
    /// so the server cannot send it all before the client closes, however late that happens.
    @Test(arguments: transports)
    func anEndlessBodyWithoutALengthIsCutOffAndTheConnectionDropped(name: String) async throws {
        defer { server.stop() }
        server.always("p.pkg", .longBody(extra: 32 << 20, contentLength: .absent))
        let body = ReceivedBody()
        await #expect(throws: TransportError.bodyTooLong(url: server.url("p.pkg").absoluteString, limit: Int64(package.count))) {
            try await get(Self.transport(name), into: body)
        }
        #expect(body.data == package.prefix(body.data.count))
        // The server's send fails once the client has closed; on a loaded machine that can take
        // longer than the log's own patience.
        #expect(server.waitUntilIdle(timeout: 60), "the server is still sending: the client did not close the connection")
        let sent = try #require(server.log.first?.bodyBytesSent)
        #expect(sent < package.count + (32 << 20), "the server could not send it all: the client closed the connection")
    }

    @Test(arguments: transports)
    func aStallOnTheWireTimesOutOnTheGivenClock(name: String) async throws {
        defer { server.stop() }
        server.always("p.pkg", .stallAfter(bytes: 1_000))
        let clock = ManualClock()
        let arrived = BytesArrived(1_000)
        let transfer = Task {
            defer { arrived.end() }
            return try await Self.transport(name).get(HTTPRequest(url: server.url("p.pkg"), maximumBodyBytes: Int64(package.count)),
                                               policy: TransferPolicy(clock: clock), onResponse: { _ in },
                                               onBody: { arrived.add($0.count) })
        }
        await arrived.wait()
        clock.advance(by: .seconds(30))
        await #expect(throws: TransportError.timedOut(url: server.url("p.pkg").absoluteString)) { try await transfer.value }
    }

    @Test(arguments: transports)
    func cancellingAStalledTransferReturnsAtOnce(name: String) async throws {
        defer { server.stop() }
        server.always("p.pkg", .stallAfter(bytes: 1_000))
        let arrived = BytesArrived(1_000)
        let transfer = Task {
            defer { arrived.end() }
            return try await Self.transport(name).get(HTTPRequest(url: server.url("p.pkg"), maximumBodyBytes: Int64(package.count)),
                                               policy: TransferPolicy(), onResponse: { _ in }, onBody: { arrived.add($0.count) })
        }
        await arrived.wait()
        transfer.cancel()
        await #expect(throws: CancellationError.self) { try await transfer.value }
    }

    @Test(arguments: transports)
    func statusesAndRefusedConnectionsAreTransportErrors(name: String) async throws {
        defer { server.stop() }
        server.plan("p.pkg", [.status(503)])
        await #expect(throws: TransportError.status(503, url: server.url("p.pkg").absoluteString)) {
            try await get(Self.transport(name))
        }
        let port = server.port
        server.stop()
        let closed = URL(string: "http://127.0.0.1:\(port)/p.pkg")!
        do {
            _ = try await Self.transport(name).get(HTTPRequest(url: closed, maximumBodyBytes: 10), policy: TransferPolicy(),
                                                   onResponse: { _ in }, onBody: { _ in })
            Issue.record("a closed port must fail")
        } catch let error as TransportError {
            #expect(error.isTransient, "\(error)")
        }
    }

    /// A library caller that takes a response and drops its body unread: the transfer ends and
    /// the connection is closed, so the server is not left blocked on a connection nobody reads
    /// (the body's read-ahead filled, its socket held shut), and the transport goes on serving.
    @Test(arguments: transports)
    func aBodyDroppedUnreadEndsItsTransfer(name: String) async throws {
        defer { server.stop() }
        // 32 MiB more than the package, announced: more than the socket buffers and the
        // read-ahead take in, so the server can only finish when the client closes.
        server.plan("p.pkg", [.longBody(extra: 32 << 20, contentLength: .includingExtra)])
        let transport = Self.transport(name)
        let total = Int64(package.count + (32 << 20))
        let status = try await transport.send(HTTPRequest(url: server.url("p.pkg"), maximumBodyBytes: total)).head.statusCode
        #expect(status == 200)
        // The response, and its body with it, is gone unread.
        let idle = await offThePool { [server] in server.waitUntilIdle(timeout: 60) }
        #expect(idle, "the server is still sending: the dropped body kept its connection open")
        let sent = try #require(server.log.first?.bodyBytesSent)
        #expect(sent < Int(total), "the server sent the whole body to a reader that was gone")
        let whole = ReceivedBody()
        _ = try await get(transport, into: whole)
        #expect(whole.data == package, "the next request on the same transport is served")
    }

    @Test(arguments: transports)
    func aSlowReaderHoldsTheServerBack(name: String) async throws {
        defer { server.stop() }
        // 256 MiB, one chunk read and then held: the server gets only as far as the socket
        // buffers and the client's small read-ahead, never the whole body into memory.
        let firehose = try FirehoseServer(bodyBytes: 256 << 20)
        defer { firehose.stop() }
        let arrived = BytesArrived(1)
        let release = Gate()
        let transfer = Task {
            defer { arrived.end() }
            return try await Self.transport(name).get(HTTPRequest(url: firehose.url, maximumBodyBytes: 256 << 20),
                                               policy: TransferPolicy(), onResponse: { _ in }, onBody: { chunk in
                arrived.add(chunk.count)
                await release.wait()
            })
        }
        await arrived.wait()
        let held = await offThePool { firehose.heldBack() }
        #expect(held != nil, "the whole body went out while the reader held its first chunk")
        #expect((held ?? .max) < 32 << 20, "the server got \(held ?? -1) bytes out while the reader held its first chunk")
        await release.open()
        transfer.cancel()
        _ = try? await transfer.value
    }
}

/// Waits until at least `count` bytes have been handed over, or the transfer has ended without
/// them (a transport that fails at once must fail its test, not hang it).
final class BytesArrived: @unchecked Sendable {
    // @unchecked: every mutable field is guarded by `lock`.
    private let lock = NSLock()
    private let count: Int
    private var total = 0
    private var ended = false
    private var waiter: CheckedContinuation<Void, Never>?

    init(_ count: Int) { self.count = count }

    func add(_ bytes: Int) {
        let ready: CheckedContinuation<Void, Never>? = lock.withLock {
            total += bytes
            guard total >= count else { return nil }
            defer { waiter = nil }
            return waiter
        }
        ready?.resume()
    }

    /// The transfer is over: whoever waits for bytes waits no more.
    func end() {
        let waiting: CheckedContinuation<Void, Never>? = lock.withLock {
            ended = true
            defer { waiter = nil }
            return waiter
        }
        waiting?.resume()
    }

    func wait() async {
        await withCheckedContinuation { continuation in
            let now: Bool = lock.withLock {
                if total >= count || ended { return true }
                waiter = continuation
                return false
            }
            if now { continuation.resume() }
        }
    }
}

/// Holds readers until opened.
actor Gate {
    private var isOpen = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func wait() async {
        if isOpen { return }
        await withCheckedContinuation { waiters.append($0) }
    }

    func open() {
        isOpen = true
        waiters.forEach { $0.resume() }
        waiters.removeAll()
    }
}
