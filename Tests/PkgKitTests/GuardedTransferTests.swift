import Foundation
import PkgKit
import Testing
import TestSupport

/// What `HTTPTransport.get` enforces whatever the server does: the idle timeout, cut-offs of a
/// body longer than expected (with or without a length), short bodies, statuses, cancellation.
/// All on a scripted transport and a manual clock: no socket, no sleep.
@Suite struct GuardedTransferTests {
    static let url = URL(string: "http://cdn.test/p.pkg")!

    /// The chunks handed to `onBody`, as the test sees them.
    final class Received: @unchecked Sendable {
        private let lock = NSLock()
        private var data = Data()
        func append(_ chunk: Data) { lock.withLock { data.append(chunk) } }
        var bytes: Data { lock.withLock { data } }
    }

    static func get(_ transport: ScriptedTransport, limit: Int64 = 1 << 20, idle: Duration = .seconds(30),
                    into received: Received = Received(),
                    onBody: (@Sendable (Data) async throws -> Void)? = nil) async throws -> HTTPResponseHead {
        try await transport.get(HTTPRequest(url: url, maximumBodyBytes: limit),
                                policy: TransferPolicy(idleTimeout: idle, clock: transport.clock),
                                onResponse: { _ in },
                                onBody: { chunk in
                                    received.append(chunk)
                                    try await onBody?(chunk)
                                })
    }

    @Test func aBodyThatStallsTimesOutAndDropsTheConnection() async throws {
        let transport = ScriptedTransport { _ in
            ScriptedTransport.Reply(head: HTTPResponseHead(statusCode: 200, contentLength: 1000), steps: [.bytes(Data(count: 100)), .stall])
        }
        let transfer = Task { try await Self.get(transport) }
        await transport.stalls(atLeast: 1)
        transport.clock.advance(by: .seconds(30))
        await #expect(throws: TransportError.timedOut(url: Self.url.absoluteString)) { try await transfer.value }
        #expect(transport.exchanges.map(\.cancelled) == [true])
    }

    @Test func aServerThatNeverAnswersTimesOut() async throws {
        let transport = ScriptedTransport { _ in ScriptedTransport.Reply(head: nil, steps: [.stall]) }
        let transfer = Task { try await Self.get(transport, idle: .seconds(5)) }
        await transport.stalls(atLeast: 1)
        transport.clock.advance(by: .seconds(4))
        transport.clock.advance(by: .seconds(1))
        await #expect(throws: TransportError.timedOut(url: Self.url.absoluteString)) { try await transfer.value }
    }

    @Test func aTrickleNeverSilentForTheTimeoutFinishes() async throws {
        let transport = ScriptedTransport { _ in
            ScriptedTransport.Reply(head: HTTPResponseHead(statusCode: 200, contentLength: 3),
                                    steps: [.bytes(Data([1])), .pause(.seconds(20)), .bytes(Data([2])), .pause(.seconds(20)), .bytes(Data([3]))])
        }
        let received = Received()
        let transfer = Task { try await Self.get(transport, into: received) }
        for _ in 0 ..< 2 {
            // The watchdog and the pause both asleep: 20 s pass, 40 s in all, never 30 s silent.
            await transport.clock.sleepers(atLeast: 2)
            transport.clock.advance(by: .seconds(20))
        }
        _ = try await transfer.value
        #expect(received.bytes == Data([1, 2, 3]))
    }

    @Test func aSlowReaderIsNotASilentServer() async throws {
        // The reader takes a minute over each chunk (a slow disk): twice the idle timeout, yet
        // nothing times out, since the client was not waiting on the network meanwhile.
        let transport = ScriptedTransport(chunkSize: 10) { _ in
            ScriptedTransport.Reply(head: HTTPResponseHead(statusCode: 200, contentLength: 20), steps: [.bytes(Data(count: 20))])
        }
        let clock = transport.clock
        let transfer = Task { try await Self.get(transport) { _ in try await clock.sleep(for: .seconds(60)) } }
        for _ in 0 ..< 2 {
            await clock.sleepers(atLeast: 2)
            clock.advance(by: .seconds(60))
        }
        _ = try await transfer.value
        #expect(transport.exchanges.map(\.completed) == [true])
    }

    @Test func aSlowReaderStillTimesOutOnceTheServerFallsSilent() async throws {
        // Back-pressure never switches the timeout off: after the slow chunk, the server stalls.
        let transport = ScriptedTransport { _ in
            ScriptedTransport.Reply(head: HTTPResponseHead(statusCode: 200, contentLength: 20), steps: [.bytes(Data(count: 10)), .stall])
        }
        let clock = transport.clock
        let transfer = Task { try await Self.get(transport) { _ in try await clock.sleep(for: .seconds(60)) } }
        await clock.sleepers(atLeast: 2)
        clock.advance(by: .seconds(60))
        await transport.stalls(atLeast: 1)
        clock.advance(by: .seconds(30))
        await #expect(throws: TransportError.timedOut(url: Self.url.absoluteString)) { try await transfer.value }
    }

    /// The repro: a package followed by megabytes of zeros, no Content-Length.
    @Test(arguments: [64 << 10, 1 << 20, 6 << 20])
    func aBodyLongerThanExpectedWithoutALengthIsCutOffAtOnce(extra: Int) async throws {
        let package = Data((0 ..< 300_000).map { UInt8($0 & 0xFF) })
        let transport = ScriptedTransport(chunkSize: 64 << 10) { _ in
            ScriptedTransport.Reply(head: HTTPResponseHead(statusCode: 200, contentLength: nil),
                                    steps: [.bytes(package + Data(count: extra)), .stall])
        }
        let received = Received()
        await #expect(throws: TransportError.bodyTooLong(url: Self.url.absoluteString, limit: Int64(package.count))) {
            try await Self.get(transport, limit: Int64(package.count), into: received)
        }
        #expect(received.bytes.count <= package.count, "nothing past the bound reaches the reader")
        #expect(received.bytes == package.prefix(received.bytes.count))
        let exchange = try #require(transport.exchanges.first)
        #expect(exchange.cancelled, "the connection is dropped")
        #expect(exchange.bytesSent <= Int64(package.count) + Int64(transport.chunkSize), "cut off at the first chunk past the bound")
    }

    @Test func aLengthOverTheBoundIsRefusedBeforeAnyBody() async throws {
        let transport = ScriptedTransport { _ in
            ScriptedTransport.Reply(head: HTTPResponseHead(statusCode: 200, contentLength: 5000), steps: [.bytes(Data(count: 5000))])
        }
        await #expect(throws: TransportError.bodyTooLong(url: Self.url.absoluteString, limit: 1000)) {
            try await Self.get(transport, limit: 1000)
        }
        #expect(transport.exchanges.map(\.bytesSent) == [0])
        #expect(transport.exchanges.map(\.cancelled) == [true])
    }

    @Test func aBodyLongerThanItsOwnLengthIsCutOff() async throws {
        let transport = ScriptedTransport { _ in
            ScriptedTransport.Reply(head: HTTPResponseHead(statusCode: 200, contentLength: 100), steps: [.bytes(Data(count: 150))])
        }
        await #expect(throws: TransportError.bodyTooLong(url: Self.url.absoluteString, limit: 100)) { try await Self.get(transport) }
    }

    @Test func aBodyShorterThanItsLengthIsALostConnection() async throws {
        let transport = ScriptedTransport { _ in
            ScriptedTransport.Reply(head: HTTPResponseHead(statusCode: 200, contentLength: 100), steps: [.bytes(Data(count: 60))])
        }
        await #expect(throws: TransportError.connectionLost(url: Self.url.absoluteString, "the body ended after 60 of 100 bytes")) {
            try await Self.get(transport)
        }
    }

    @Test func anErrorStatusIsThrownAndItsBodyNotRead() async throws {
        let transport = ScriptedTransport { _ in
            ScriptedTransport.Reply(head: HTTPResponseHead(statusCode: 503, contentLength: 10), steps: [.bytes(Data(count: 10))])
        }
        await #expect(throws: TransportError.status(503, url: Self.url.absoluteString)) { try await Self.get(transport) }
        #expect(transport.exchanges.map(\.bytesSent) == [0])
    }

    @Test func cancellingTheTaskEndsAStalledTransferAndDropsTheConnection() async throws {
        let transport = ScriptedTransport { _ in
            ScriptedTransport.Reply(head: HTTPResponseHead(statusCode: 200, contentLength: 1000), steps: [.bytes(Data(count: 10)), .stall])
        }
        let transfer = Task { try await Self.get(transport) }
        await transport.stalls(atLeast: 1)
        transfer.cancel()
        await #expect(throws: CancellationError.self) { try await transfer.value }
        #expect(transport.exchanges.map(\.cancelled) == [true])
    }

    @Test func retriesWaitTheBackoffOnTheGivenClock() async throws {
        let clock = ManualClock()
        let policy = RetryPolicy(maximumAttempts: 4, initialDelay: 0.5, multiplier: 2, jitter: 0)
        let attempts = Task {
            try await policy.run(clock: clock) { number, _ in
                if number < 4 { throw TransportError.connectionLost(url: "u", "reset") }
                return number
            }
        }
        for _ in 0 ..< 3 {
            await clock.sleepers(atLeast: 1)
            clock.advance(by: .seconds(8))
        }
        #expect(try await attempts.value == 4)
        #expect(clock.sleeps == [.milliseconds(500), .seconds(1), .seconds(2)])
    }
}
