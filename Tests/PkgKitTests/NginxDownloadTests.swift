import Foundation
import Testing
@testable import PkgKit
import TestSupport

/// The resumable download against a real web server (Debian's nginx, started by the test), with
/// nginx's own access log as the witness of what was asked and sent.
@Suite(.serialized, .enabled(if: NginxServer.isAvailable, "nginx is not installed: run `make deps`"), .timeLimit(.minutes(2)))
struct NginxDownloadTests {
    let folder: Scratch
    let data = pseudoRandomData(600_000, seed: 42)

    init() throws {
        folder = try Scratch()
        try folder.write("site/com.example.book/1.0.pkg", data)
    }

    func download(_ server: NginxServer, path: String = "com.example.book/1.0.pkg", sha256: String? = nil,
                  size: Int64? = nil) -> ResumableDownload {
        ResumableDownload(url: server.url(path), partPath: folder.path("1.0.part"), expectedSize: size ?? Int64(data.count),
                          expectedSHA256: sha256 ?? sha256Hex(data), retryPolicy: instantRetries)
    }

    @Test func fullDownload() async throws {
        let nginx = try NginxServer(root: folder.path("site"))
        defer { nginx.stop() }
        let result = try await download(nginx).run(using: StandardTransport())
        #expect(folder.contents("1.0.part") == data)
        #expect(result.bytesDownloaded == Int64(data.count))
        let log = nginx.log(atLeast: 1)
        #expect(log == [ServedRequest(path: "/com.example.book/1.0.pkg", range: nil, status: 200, bodyBytesSent: data.count)])
    }

    @Test func resumesAcrossRunsWithARangeRequest() async throws {
        let nginx = try NginxServer(root: folder.path("site"))
        defer { nginx.stop() }
        try folder.write("1.0.part", data.prefix(250_000))
        let result = try await download(nginx).run(using: StandardTransport())
        #expect(folder.contents("1.0.part") == data)
        #expect(result.resumedFrom == 250_000)
        #expect(nginx.log(atLeast: 1) == [ServedRequest(path: "/com.example.book/1.0.pkg", range: "bytes=250000-",
                                                            status: 206, bodyBytesSent: data.count - 250_000)])
    }

    @Test func resumesAfterAnInterruptedDownload() async throws {
        let nginx = try NginxServer(root: folder.path("site"), limitRate: 100_000)
        defer { nginx.stop() }
        let job = download(nginx)
        // Cancelled by the download's own progress once some bytes are in the .part, so that a
        // busy machine cannot let it run to its end first (at 100 kB/s, seconds later).
        let canceller = FirstBytesCanceller()
        let first = Task { try await job.run(using: StandardTransport(), progress: { done, _ in if done > 0 { canceller.cancel() } }) }
        canceller.set(first)
        await #expect(throws: CancellationError.self) { try await first.value }
        let kept = folder.size("1.0.part") ?? 0
        #expect(kept > 0 && kept < Int64(data.count))
        let result = try await download(nginx).run(using: StandardTransport())
        #expect(folder.contents("1.0.part") == data)
        #expect(result.resumedFrom == kept)
        let log = nginx.log(atLeast: 2)
        #expect(log.count == 2)
        #expect(log.last?.range == "bytes=\(kept)-")
        #expect(log.last?.status == 206)
        #expect(log.last?.bodyBytesSent == data.count - Int(kept))
    }

    @Test func aServerWithoutRangesGetsOneFullDownload() async throws {
        let nginx = try NginxServer(root: folder.path("site"), honorRanges: false)
        defer { nginx.stop() }
        try folder.write("1.0.part", data.prefix(100_000))
        let result = try await download(nginx).run(using: StandardTransport())
        #expect(folder.contents("1.0.part") == data)
        #expect(result.resumedFrom == 0)
        let log = nginx.log(atLeast: 1)
        #expect(log.map(\.status) == [200])
        #expect(log.map(\.bodyBytesSent) == [data.count])
    }

    @Test func a404IsNotRetried() async throws {
        let nginx = try NginxServer(root: folder.path("site"))
        defer { nginx.stop() }
        await #expect(throws: TransportError.status(404, url: nginx.url("com.example.book/9.9.pkg").absoluteString)) {
            try await download(nginx, path: "com.example.book/9.9.pkg").run(using: StandardTransport())
        }
        #expect(nginx.log(atLeast: 1).map(\.status) == [404])
    }

    @Test func aLargerFileThanTheCatalogSaysIsRefusedBeforeItsBody() async throws {
        let nginx = try NginxServer(root: folder.path("site"))
        defer { nginx.stop() }
        do {
            _ = try await download(nginx, size: 1_000).run(using: StandardTransport())
            Issue.record("must be refused")
        } catch let error as DownloadError {
            #expect(error.disposition == .refused)
        }
        #expect((folder.size("1.0.part") ?? 0) <= 1_000)
    }

    @Test func aWrongSHA256IsRefused() async throws {
        let nginx = try NginxServer(root: folder.path("site"))
        defer { nginx.stop() }
        await #expect(throws: DownloadError.self) {
            try await download(nginx, sha256: String(repeating: "0", count: 64)).run(using: StandardTransport())
        }
        #expect(!FileManager.default.fileExists(atPath: folder.path("1.0.part")))
    }
}

/// Cancels a task when told to, even when told before the task is handed to it.
// Unchecked: `task` and `requested` are touched only with `lock` held.
private final class FirstBytesCanceller: @unchecked Sendable {
    private let lock = NSLock()
    private var task: Task<ResumableDownload.Result, any Error>?
    private var requested = false

    func set(_ task: Task<ResumableDownload.Result, any Error>) {
        lock.lock()
        self.task = task
        let cancelNow = requested
        lock.unlock()
        if cancelNow { task.cancel() }
    }

    func cancel() {
        lock.lock()
        requested = true
        let task = task
        lock.unlock()
        task?.cancel()
    }
}
