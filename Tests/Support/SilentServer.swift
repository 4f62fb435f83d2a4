import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A server on loopback that takes every connection, reads the request, and never answers: the
/// probe for a client stuck before any response (a catalog that never comes). `requests(atLeast:)`
/// waits until the client's requests have arrived, so a test acts on a condition, not a delay.
public final class SilentServer: @unchecked Sendable {
    // @unchecked: `received` and `clients` are guarded by `condition`; the rest is immutable.
    /// The port listened on.
    public let port: Int
    private let listener: Int32
    private let condition = NSCondition()
    private var received = 0
    private var clients: [Int32] = []

    /// Starts listening on 127.0.0.1 at a free port.
    public init() throws {
        (listener, port) = try LoopbackListener.open(backlog: 16)
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    /// `http://127.0.0.1:PORT/` plus `path`.
    public func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)/\(path)")! }

    /// Returns once `count` requests have arrived.
    public func requests(atLeast count: Int) {
        condition.withLock { while received < count { condition.wait() } }
    }

    /// How many requests have arrived so far.
    public var requestCount: Int { condition.withLock { received } }

    /// Stops listening and closes every connection.
    public func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        condition.withLock {
            for client in clients { shutdown(client, Int32(SHUT_RDWR)) }
        }
    }

    private func acceptLoop() {
        defer { close(listener) }
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else {
                if errno == EINTR { continue }
                return
            }
            condition.withLock { clients.append(client) }
            Thread.detachNewThread { [self] in
                var request = [UInt8](repeating: 0, count: 4096)
                if read(client, &request, request.count) > 0 {
                    condition.withLock {
                        received += 1
                        condition.broadcast()
                    }
                }
                // Hold the connection, silent, until the client or `stop` ends it.
                while read(client, &request, request.count) > 0 {}
                close(client)
            }
        }
    }
}
