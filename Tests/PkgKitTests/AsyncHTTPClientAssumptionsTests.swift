#if os(Linux)
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Testing
@testable import PkgKitTransport
import PkgKitSupport
import TestSupport

/// What `AsyncHTTPClientTransport` relies on from AsyncHTTPClient beyond its documented
/// behaviour (`AsyncHTTPClientAssumptions`), checked on the real client over a real socket: an
/// upgrade of the client that breaks one fails here, by name. That the gate then really holds
/// the server back and keeps every byte is `HTTPTransportSocketTests.aSlowReaderHoldsTheServerBack`
/// and `ResumeAfterCutTests.aReaderFarBehindTheReadAheadResumesFromTheCut`.
@Suite(.timeLimit(.minutes(2))) struct AsyncHTTPClientAssumptionsTests {
    let folder: Scratch
    let server: FaultHTTPServer

    init() throws {
        folder = try Scratch()
        try folder.write("site/p.pkg", pseudoRandomData(100_000, seed: 39))
        server = try FaultHTTPServer(root: folder.path("site"))
    }

    /// The transport's own client delivers each head on the request's loop, within the read of
    /// a connection that carries a gate: the server closes every connection after its answer,
    /// so each request here is a new connection.
    @Test func everyConnectionDeliversItsHeadWithinItsGatedRead() async throws {
        defer { server.stop() }
        for _ in 0 ..< 2 {
            let probe = HeadProbe()
            let request = try HTTPClient.Request(url: server.url("p.pkg").absoluteString)
            let task = AsyncHTTPClientTransport.client.execute(
                request: request, delegate: probe, eventLoop: AsyncHTTPClientAssumptions.placement(on: AsyncHTTPClientTransport.loop))
            try await task.futureResult.get()
            let found = try #require(probe.found.current, "the client never delivered a head")
            #expect(throws: Never.self, "the head came outside its connection's gated read") { try found.get() }
        }
        #expect(server.log.count == 2)
    }

    /// A client that does not install the gate (what an upgrade that stops calling the
    /// connection initializer amounts to): the body fails the request at its head, never
    /// reading on without holding the server back.
    @Test func aHeadWithoutItsConnectionsGateFailsTheRequest() async throws {
        defer { server.stop() }
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: HTTPClient.Configuration())
        let url = server.url("p.pkg").absoluteString
        let body = ResponseBody(url: url, limit: 1 << 20)
        let loop = client.eventLoopGroup.next()
        body.start(client.execute(request: try HTTPClient.Request(url: url), delegate: body, eventLoop: .delegateAndChannel(on: loop)))
        await #expect(throws: AsyncHTTPClientAssumptions.brokenAssumption(url: url)) { _ = try await body.head() }
        try await client.shutdown()
    }
}

/// Records whether the client delivered the head where the transport's body looks for its gate.
private final class HeadProbe: HTTPClientResponseDelegate, Sendable {
    typealias Response = Void

    /// What looking for the gate gave, once the head arrived.
    let found = LockedValue<Result<Void, any Error>?>(nil)

    func didReceiveHead(task: HTTPClient.Task<Void>, _ head: NIOHTTP1.HTTPResponseHead) -> EventLoopFuture<Void> {
        let result = Result { _ = try AsyncHTTPClientAssumptions.gate(deliveringHeadOf: task, url: "") }
        found.withLock { $0 = result }
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didFinishRequest(task: HTTPClient.Task<Void>) throws {}
}
#endif
