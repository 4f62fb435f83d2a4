import Foundation
import Testing
@testable import PkgKit
import TestSupport

/// The transport's back-pressure: a handler slower than the network holds the network back.
///
/// Filling the delegate queue holds FoundationNetworking's one queue for every URLSession of the
/// process (see `BoundedOperationQueue`), so these tests stall the other sessions of the test
/// process: the Makefile runs them in a pass of their own, where they trip no other test's idle
/// timeout.
@Suite(.timeLimit(.minutes(1))) struct BackPressureTests {
    let folder: Scratch
    let server: FaultHTTPServer

    init() throws {
        folder = try Scratch()
        server = try FaultHTTPServer(root: folder.path("site"))
    }

    @Test func aSlowConsumerHoldsTheNetworkBackInsteadOfQueueingTheBody() async throws {
        defer { server.stop() }
        // 8 MiB over loopback, consumed at about 16 MB/s: without back-pressure, most of the body
        // would wait in memory for the handler.
        let big = pseudoRandomData(8 << 20, seed: 3)
        try folder.write("site/big.pkg", big)
        let transport = URLSessionTransport()
        let body = ReceivedBody()
        _ = try await transport.get(HTTPRequest(url: server.url("big.pkg"), range: nil, maximumBodyBytes: Int64(big.count)),
                                    onResponse: { _ in }, onBody: { chunk in
            body.append(chunk)
            usleep(1_000)
        })
        #expect(body.data == big)
        #expect(transport.delegateQueue.highWater == URLSessionTransport.maxQueuedCallbacks,
                "the network thread waited for the handler once the queue was full")
    }
}
