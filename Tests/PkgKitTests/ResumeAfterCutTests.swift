import Foundation
import Testing
@testable import PkgKit
import TestSupport

/// A server that closes the connection (a FIN) after a known count of bytes: the download
/// resumes from the first byte that is not on disk yet, through the real HTTP transport and the
/// real `.part`, and nothing that reached the client is fetched again. The reader that takes its
/// time is the case that counts: bytes waiting for it when the FIN arrives must reach it too.
@Suite(.timeLimit(.minutes(2))) struct ResumeAfterCutTests {
    static let size = 4_000_000
    /// Not a multiple of any buffer size.
    static let cut = 1_680_000
    /// How far below the cut the next request may start: bytes the kernel may still have held.
    static let slack = 64 << 10

    let folder: Scratch
    let server: FaultHTTPServer
    let package = pseudoRandomData(ResumeAfterCutTests.size, seed: 27)

    init() throws {
        folder = try Scratch()
        try folder.write("site/p.pkg", package)
        server = try FaultHTTPServer(root: folder.path("site"))
        server.plan("p.pkg", [.dropAfter(bytes: Self.cut)])
    }

    /// Downloads the package with the platform's HTTP transport, the first response's reader
    /// held until `hold` returns; then checks the next request's Range and the file.
    /// `readAhead` (Linux) is how much the client itself reads ahead of the reader.
    func downloadAfterACut(readAhead: Int? = nil, hold: @escaping @Sendable () async -> Void) async throws {
        defer { server.stop() }
        #if os(Linux)
        var transport = AsyncHTTPClientTransport()
        if let readAhead { transport.readAhead = readAhead }
        let base: any HTTPTransport = transport
        #else
        let base: any HTTPTransport = URLSessionTransport()
        #endif
        let download = ResumableDownload(url: server.url("p.pkg"), partPath: folder.path("p.part"), expectedSize: Int64(Self.size),
                                         expectedSHA256: sha256Hex(package), retryPolicy: instantRetries)
        let result = try await download.run(using: HeldTransport(base: base, hold: hold))
        #expect(folder.contents("p.part") == package)
        let log = server.log(for: "p.pkg")
        try #require(log.count == 2, "\(log)")
        #expect(log[0].range == nil && log[0].bodyBytesSent == Self.cut)
        let from = try #require(log[1].range.flatMap { Int($0.dropFirst("bytes=".count).dropLast()) }, "\(log)")
        #expect(from <= Self.cut && from >= Self.cut - Self.slack, "asked again from byte \(from); the server had sent \(Self.cut)")
        #expect(result.bytesDownloaded == Int64(Self.size))
    }

    @Test func aReaderThatKeepsUpResumesFromTheCut() async throws {
        try await downloadAfterACut(hold: {})
    }

    /// The reader takes nothing until the server has sent its bytes and closed the connection:
    /// they wait in the client when the FIN arrives, and must still reach the `.part`.
    @Test func aReaderHeldUntilTheServerClosedResumesFromTheCut() async throws {
        try await downloadAfterACut(hold: untilTheServerClosed)
    }

    #if os(Linux)
    /// The reader is held far beyond what the client reads ahead for it: the client stops
    /// reading, and most of the bytes sent wait in the system, most of them on the server's side,
    /// when the reader starts. They arrive with the FIN behind them, and must reach the `.part`
    /// all the same. (The system holds over 4 MB for a connection nobody reads on loopback, so
    /// the server can send its bytes and close.)
    @Test func aReaderFarBehindTheReadAheadResumesFromTheCut() async throws {
        try await downloadAfterACut(readAhead: 128 << 10, hold: untilTheServerClosed)
    }
    #endif

    /// Waits until the server has sent its bytes and closed the connection.
    @Sendable func untilTheServerClosed() async {
        let server = self.server
        let closed = await offThePool { waitUntil { server.bytesSent >= Self.cut && server.openConnections == 0 } }
        #expect(closed, "the server could not send its \(Self.cut) bytes while the reader waited")
    }
}

/// A transport whose first response's reader waits for `hold` before it takes its first chunk.
private struct HeldTransport: HTTPTransport {
    let base: any HTTPTransport
    let hold: @Sendable () async -> Void
    private let first = Once()

    init(base: any HTTPTransport, hold: @escaping @Sendable () async -> Void) {
        self.base = base
        self.hold = hold
    }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let response = try await base.send(request)
        guard first.take() else { return response }
        let body = response.body, hold = self.hold, held = Once()
        return HTTPResponse(head: response.head, body: HTTPBody(next: {
            if held.take() { await hold() }
            var chunks = body.makeAsyncIterator()
            return try await chunks.next()
        }, cancel: { body.cancel() }))
    }
}

/// True the first time it is taken only.
private final class Once: @unchecked Sendable {
    // @unchecked: `used` is only touched under `lock`.
    private let lock = NSLock()
    private var used = false

    func take() -> Bool {
        lock.withLock {
            defer { used = true }
            return !used
        }
    }
}
