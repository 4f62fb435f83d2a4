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
        let reader = Reader(iterator: body.makeAsyncIterator())
        response.body = HTTPBody(next: {
            let chunk = try await reader.next()
            if let chunk { counter.add(Int64(chunk.count)) }
            return chunk
        }, cancel: { body.cancel() })
        return response
    }

    /// The wrapped body's iterator, kept between calls by the one task reading the body.
    private final class Reader: @unchecked Sendable {
        // @unchecked: used by one reader at a time (HTTPBody's contract).
        private var iterator: HTTPBody.AsyncIterator

        init(iterator: HTTPBody.AsyncIterator) { self.iterator = iterator }

        func next() async throws -> Data? { try await iterator.next() }
    }
}
