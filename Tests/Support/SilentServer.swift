import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A server on loopback that takes every connection, reads the request, and never answers: the
/// probe for a client stuck before any response (a catalog that never comes). `requests(atLeast:)`
/// waits until the client's requests have arrived, and `settledRequestCount()` counts them once
/// the client is gone, so a test acts on a condition, not a delay.
public final class SilentServer: @unchecked Sendable {
    // @unchecked: `received`, `unread`, `settled`, `clients` and `listening` are guarded by
    // `condition`; the rest is immutable. A descriptor is closed under the same lock that `stop`
    // shuts sockets down under, and leaves `clients` as it closes: tests run in parallel in one
    // process, and a shutdown of a number already closed and reused would cut another test's socket.
    /// The port listened on.
    public let port: Int
    private let listener: Int32
    private let condition = NSCondition()
    private var received = 0
    /// Connections taken whose first read has not returned yet.
    private var unread = 0
    /// The probe of `settledRequestCount` has been read.
    private var settled = false
    private static let probe = Array("settle\n".utf8)
    private var clients: [Int32] = []
    private var listening = true

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

    /// How many requests arrived, counted once every connection made before this call has been
    /// taken and read: a request the client sent just before it ended is not missed because the
    /// server had not read it yet. Call it once the client is gone (a connection it still holds
    /// open and silent would be waited for).
    public func settledRequestCount() throws -> Int {
        // The kernel hands connections over in the order they were made: once this probe has been
        // taken, so has every earlier connection, and `unread` covers each one not read yet.
        guard let probe = LoopbackListener.connected(to: port) else { throw ServerError("cannot connect to port \(port)") }
        defer { close(probe) }
        guard write(probe, Self.probe, Self.probe.count) == Self.probe.count else {
            throw ServerError("probe: \(String(cString: strerror(errno)))")
        }
        return condition.withLock {
            while !settled || unread > 0 { condition.wait() }
            return received
        }
    }

    /// Stops listening and closes every connection.
    public func stop() {
        condition.withLock {
            if listening { shutdown(listener, Int32(SHUT_RDWR)) }
            for client in clients { shutdown(client, Int32(SHUT_RDWR)) }
        }
    }

    private func acceptLoop() {
        defer {
            condition.withLock {
                listening = false
                close(listener)
            }
        }
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else {
                // A client that gave up before its connection was taken is not the end.
                if errno == EINTR || errno == ECONNABORTED { continue }
                return
            }
            condition.withLock {
                clients.append(client)
                unread += 1
            }
            Thread.detachNewThread { [self] in
                var request = [UInt8](repeating: 0, count: 4096)
                let count = read(client, &request, request.count)
                condition.withLock {
                    if count > 0, request.prefix(count).elementsEqual(Self.probe) {
                        settled = true
                    } else if count > 0 {
                        received += 1
                    }
                    unread -= 1
                    condition.broadcast()
                }
                // Hold the connection, silent, until the client or `stop` ends it.
                while read(client, &request, request.count) > 0 {}
                condition.withLock {
                    clients.removeAll { $0 == client }
                    close(client)
                }
            }
        }
    }
}
