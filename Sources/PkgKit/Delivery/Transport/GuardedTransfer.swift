import Foundation
import PkgKitSupport

extension HTTPTransport {
    /// GETs `request` and hands its body to `onBody`, chunk by chunk, enforcing what must hold
    /// whatever the server does:
    /// - nothing arrives for `policy.idleTimeout` while we wait (head or body): `.timedOut`;
    /// - a status other than 200 or 206: `.status`, the body not read; but `304 Not Modified`
    ///   to a request with validators is returned as it is, with no body;
    /// - a body longer than `request.maximumBodyBytes`, or than its own `Content-Length`:
    ///   `.bodyTooLong` at once, whether or not a length was sent; nothing past the bound
    ///   reaches `onBody`, and the connection is dropped;
    /// - a body shorter than its `Content-Length`: `.connectionLost`.
    ///
    /// `onResponse` judges the head first (a 200 where a range was asked for is the caller's to
    /// handle) and may throw to refuse it. `onBody` is awaited before the next chunk is read, so
    /// a slow `onBody` slows the transfer down (back-pressure), never piles the body up in
    /// memory, and never counts as silence. Returns the head once the body is complete; throws
    /// `CancellationError` when the calling task is cancelled, after dropping the connection.
    public func get(_ request: HTTPRequest, policy: TransferPolicy,
                    onResponse: @escaping @Sendable (HTTPResponseHead) throws -> Void,
                    onBody: @escaping @Sendable (Data) async throws -> Void) async throws -> HTTPResponseHead {
        try await guardedGet(request, clock: policy.clock, idleTimeout: policy.idleTimeout, onResponse: onResponse, onBody: onBody)
    }

    /// `get` with the policy's clock opened to its concrete type.
    private func guardedGet<C: Clock>(_ request: HTTPRequest, clock: C, idleTimeout: Duration,
                                      onResponse: @escaping @Sendable (HTTPResponseHead) throws -> Void,
                                      onBody: @escaping @Sendable (Data) async throws -> Void) async throws -> HTTPResponseHead
    where C.Duration == Duration {
        let url = request.url.absoluteString
        return try await IdleWatchdog.run(clock: clock, idleTimeout: idleTimeout, url: url) { watchdog in
            watchdog.waiting()
            let response = try await send(request)
            watchdog.arrived()
            let head = response.head
            do {
                let notModified = head.statusCode == 304 && request.validators != nil
                guard head.statusCode == 200 || head.statusCode == 206 || notModified else {
                    throw TransportError.status(head.statusCode, url: url)
                }
                try onResponse(head)
                // A 304 has no body, whatever length it may repeat from the resource's headers.
                var limit = notModified ? 0 : request.maximumBodyBytes
                if let length = head.contentLength, !notModified {
                    guard length <= limit else { throw TransportError.bodyTooLong(url: url, limit: limit) }
                    limit = length
                }
                var received: Int64 = 0
                var chunks = response.body.makeAsyncIterator()
                while true {
                    watchdog.waiting()
                    let next = try await chunks.next()
                    watchdog.arrived()
                    guard let chunk = next else { break }
                    guard Int64(chunk.count) <= limit - received else { throw TransportError.bodyTooLong(url: url, limit: limit) }
                    received += Int64(chunk.count)
                    try await onBody(chunk)
                }
                if let length = head.contentLength, !notModified, received < length {
                    throw TransportError.connectionLost(url: url, "the body ended after \(received) of \(length) bytes")
                }
                return head
            } catch {
                // Whatever stopped the transfer early, the rest of the body is not wanted.
                response.body.cancel()
                throw error
            }
        }
    }

    /// GETs a whole small resource into memory (a catalog, a signature), refusing a body over
    /// `maximumBytes` (`.bodyTooLong`).
    public func fetchData(_ url: URL, maximumBytes: Int64, policy: TransferPolicy = TransferPolicy()) async throws -> Data {
        let collected = LockedValue(Data())
        _ = try await get(HTTPRequest(url: url, maximumBodyBytes: maximumBytes), policy: policy,
                          onResponse: { _ in }, onBody: { chunk in collected.withLock { $0.append(chunk) } })
        return collected.current
    }
}
