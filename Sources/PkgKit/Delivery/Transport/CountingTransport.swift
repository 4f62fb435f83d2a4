import Foundation
import PkgKitSupport

/// A transport that counts every body byte read through it: what a sync reports as downloaded,
/// whatever became of the bytes (a catalog refused, a package cut off, a retry).
public struct CountingTransport: HTTPTransport {
    /// The transport that does the work.
    public let base: any HTTPTransport
    private let counter = ByteCounter()

    /// Counts what `base` delivers.
    public init(_ base: any HTTPTransport) {
        self.base = base
    }

    /// Body bytes read so far, through every response.
    public var bytesReceived: Int64 { counter.value }

    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        var response = try await base.send(request)
        let body = response.body, counter = self.counter
        response.body = HTTPBody(next: {
            // An iterator keeps nothing of its own: each `next` asks the transport for the next chunk.
            var chunks = body.makeAsyncIterator()
            let chunk = try await chunks.next()
            if let chunk { counter.add(Int64(chunk.count)) }
            return chunk
        }, cancel: { body.cancel() })
        return response
    }
}
