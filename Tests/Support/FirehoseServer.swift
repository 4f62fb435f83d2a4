import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A one-connection HTTP server on loopback that sends a body as fast as the client takes it,
/// and reports how far it got before the client stopped taking: the probe for back-pressure.
/// It writes without blocking until the socket is full, and counts the client as holding back
/// once the socket stays full for `patience` seconds.
public final class FirehoseServer: @unchecked Sendable {
    // @unchecked: `written`, `held`, `done` and `listening` are guarded by `condition`; the rest
    // is immutable. The listener is closed under that lock and `stop` shuts it down only while
    // it is open: a number closed and reused by another test in this process is never touched.
    public let port: Int
    private let listener: Int32
    private let condition = NSCondition()
    private var written = 0
    private var held: Int?
    private var done = false
    private var listening = true

    /// Starts serving one response of `bodyBytes` bytes.
    public init(bodyBytes: Int, patience: Double = 0.3) throws {
        (listener, port) = try LoopbackListener.open(backlog: 1)
        Thread.detachNewThread { [self] in serve(bodyBytes: bodyBytes, patience: patience) }
    }

    /// `http://127.0.0.1:PORT/big`.
    public var url: URL { URL(string: "http://127.0.0.1:\(port)/big")! }

    /// Waits until the client has held the server back (the socket stayed full for the
    /// patience), and returns how many body bytes had been written by then; nil when the whole
    /// body went out without the client ever holding back.
    public func heldBack() -> Int? {
        condition.withLock {
            while held == nil && !done { condition.wait() }
            return held
        }
    }

    /// Stops the server.
    public func stop() {
        condition.withLock { if listening { shutdown(listener, Int32(SHUT_RDWR)) } }
    }

    private func serve(bodyBytes: Int, patience: Double) {
        defer {
            condition.withLock {
                listening = false
                close(listener)
                done = true
                condition.broadcast()
            }
        }
        let client = accept(listener, nil, nil)
        guard client >= 0 else { return }
        defer { close(client) }
        var request = [UInt8](repeating: 0, count: 4096)
        _ = read(client, &request, request.count)
        let head = Array("HTTP/1.1 200 OK\r\nContent-Length: \(bodyBytes)\r\nConnection: close\r\n\r\n".utf8)
        guard write(client, head, head.count) == head.count else { return }
        _ = fcntl(client, F_SETFL, fcntl(client, F_GETFL) | O_NONBLOCK)
        let block = [UInt8](repeating: 0x42, count: 64 << 10)
        var sent = 0
        while sent < bodyBytes {
            let count = write(client, block, min(block.count, bodyBytes - sent))
            if count > 0 {
                sent += count
                condition.withLock { written = sent }
                continue
            }
            guard count < 0, errno == EAGAIN || errno == EWOULDBLOCK else { return }
            var poller = pollfd(fd: client, events: Int16(POLLOUT), revents: 0)
            if poll(&poller, 1, Int32(patience * 1000)) == 0 {
                condition.withLock {
                    if held == nil { held = sent }
                    condition.broadcast()
                }
            }
        }
    }
}
