#if canImport(AsyncHTTPClient)
import AsyncHTTPClient
import NIOCore

/// Everything `AsyncHTTPClientTransport` relies on from AsyncHTTPClient beyond its documented
/// behaviour, in one place. The read gate (`ReadGate`) stands on two of the client's ways:
///
/// 1. The client calls `http1_1ConnectionDebugInitializer` on every HTTP/1.1 connection it
///    makes, before the connection carries a request: the gate is installed there, first in the
///    pipeline (`installReadGates`).
/// 2. With `.delegateAndChannel(on: loop)`, the connection runs on `loop` and the client calls
///    the delegate's `didReceiveHead` synchronously, within the connection's delivery of the
///    bytes that hold the head: the body finds its connection's gate as the one delivering right
///    now (`gate(deliveringHeadOf:url:)`). So every request runs on the one `loop`.
///
/// Neither is promised by the client's documentation, so neither is trusted silently: a head
/// delivered without its connection's gate fails the request (`brokenAssumption`), never
/// falling back to a body the server is not held back by or that loses the bytes that reached
/// the machine when a connection closes. `AsyncHTTPClientAssumptionsTests` checks each on the
/// real client, and the socket tests (`aSlowReaderHoldsTheServerBack`,
/// `aReaderFarBehindTheReadAheadResumesFromTheCut`) check that the gate really holds the server
/// back and keeps every byte: an upgrade of the client that breaks one fails them.
enum AsyncHTTPClientAssumptions {
    /// Has the client install a `ReadGate` first in the pipeline of every HTTP/1.1 connection.
    static func installReadGates(_ configuration: inout HTTPClient.Configuration) {
        // HTTP/2 would share a connection between bodies, and a gate could not hold one back
        // without the others.
        configuration.httpVersion = .http1Only
        configuration.http1_1ConnectionDebugInitializer = { channel in
            channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(ReadGate(), position: .first) }
        }
    }

    /// How every request asks to run: on `loop`, its connection with it.
    static func placement(on loop: any EventLoop) -> HTTPClient.EventLoopPreference {
        .delegateAndChannel(on: loop)
    }

    /// The gate of the connection delivering `task`'s head, to be called from `didReceiveHead`;
    /// `brokenAssumption` when the client called it anywhere else.
    static func gate(deliveringHeadOf task: HTTPClient.Task<Void>, url: String) throws -> NIOLoopBound<ReadGate> {
        guard task.eventLoop.inEventLoop, let gate = ReadGate.current, gate.eventLoop === task.eventLoop else {
            throw brokenAssumption(url: url)
        }
        return NIOLoopBound(gate, eventLoop: task.eventLoop)
    }

    /// What a request fails with when the client no longer delivers a head within its
    /// connection's read: the body could not be read at the reader's pace.
    static func brokenAssumption(url: String) -> TransportError {
        .failed(url: url, "the HTTP client delivered the response outside its connection, so it could not be read at the reader's pace (PkgKit does not support this version of AsyncHTTPClient)")
    }
}
#endif
