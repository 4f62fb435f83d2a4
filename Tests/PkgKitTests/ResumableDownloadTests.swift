import Foundation
import Testing
@testable import PkgKit
import TestSupport

/// The resumable download against the fault-injecting server: every fault ends with the right
/// bytes in the `.part`, or a clear error and a `.part` never longer than the package.
@Suite(.timeLimit(.minutes(1))) struct ResumableDownloadTests {
    let folder: Scratch
    let data = pseudoRandomData(300_000)
    let server: FaultHTTPServer

    init() throws {
        folder = try Scratch()
        try folder.write("site/p.pkg", data)
        server = try FaultHTTPServer(root: folder.path("site"))
    }

    func download(sha256: String? = nil, size: Int64? = nil, policy: RetryPolicy = quickRetries) -> ResumableDownload {
        ResumableDownload(url: server.url("p.pkg"), partPath: folder.path("p.part"), expectedSize: size ?? Int64(data.count),
                          expectedSHA256: sha256 ?? sha256Hex(data), retryPolicy: policy)
    }

    @Test func plainDownloadReportsProgress() async throws {
        defer { server.stop() }
        let progress = ProgressLog()
        let result = try await download().run(using: URLSessionTransport()) { progress.record($0, $1) }
        #expect(folder.contents("p.part") == data)
        #expect(result == ResumableDownload.Result(bytesDownloaded: Int64(data.count), resumedFrom: 0, attempts: 1))
        let reports = progress.all
        #expect(reports.first.map { $0.0 } == 0)
        #expect(reports.last.map { $0.0 } == Int64(data.count))
        #expect(reports.allSatisfy { $0.1 == Int64(data.count) })
        #expect(zip(reports, reports.dropFirst()).allSatisfy { $0.0 <= $1.0 })
        #expect(server.log.map(\.range) == [nil])
    }

    @Test func resumesAfterADroppedConnection() async throws {
        defer { server.stop() }
        server.plan("p.pkg", [.dropAfter(bytes: 100_000)])
        let result = try await download().run(using: URLSessionTransport())
        #expect(folder.contents("p.part") == data)
        let log = server.log(for: "p.pkg")
        #expect(log.map(\.range) == [nil, "bytes=100000-"])
        #expect(log.map(\.status) == [200, 206])
        #expect(log.map(\.bodyBytesSent) == [100_000, 200_000])
        #expect(result.bytesDownloaded == Int64(data.count))
        #expect(result.attempts == 2)
    }

    @Test func resumesAcrossRunsFromAnExistingPart() async throws {
        defer { server.stop() }
        try folder.write("p.part", data.prefix(120_000))
        let result = try await download().run(using: URLSessionTransport())
        #expect(folder.contents("p.part") == data)
        #expect(result == ResumableDownload.Result(bytesDownloaded: Int64(data.count - 120_000), resumedFrom: 120_000, attempts: 1))
        #expect(server.log.map(\.range) == ["bytes=120000-"])
        #expect(server.log.map(\.bodyBytesSent) == [data.count - 120_000])
    }

    @Test func aServerIgnoringRangeRestartsFromZero() async throws {
        defer { server.stop() }
        // A prefix that is not the package's: a 200 must replace it, not append to it.
        try folder.write("p.part", Data(repeating: 0xEE, count: 50_000))
        server.plan("p.pkg", [.ignoreRange])
        let result = try await download().run(using: URLSessionTransport())
        #expect(folder.contents("p.part") == data)
        #expect(result.resumedFrom == 0)
        #expect(result.bytesDownloaded == Int64(data.count))
        #expect(server.log.map(\.status) == [200])
        #expect(server.log.map(\.range) == ["bytes=50000-"])
    }

    @Test func a503IsRetried() async throws {
        defer { server.stop() }
        server.plan("p.pkg", [.status(503), .status(503)])
        let result = try await download().run(using: URLSessionTransport())
        #expect(folder.contents("p.part") == data)
        #expect(result.attempts == 3)
        #expect(server.log.map(\.status) == [503, 503, 200])
    }

    @Test func endless503sGiveUpAfterTheAttempts() async throws {
        defer { server.stop() }
        server.always("p.pkg", .status(503))
        await #expect(throws: TransportError.status(503, url: server.url("p.pkg").absoluteString)) {
            try await download().run(using: URLSessionTransport())
        }
        #expect(server.log.count == quickRetries.maximumAttempts)
    }

    @Test func a404IsNotRetried() async throws {
        defer { server.stop() }
        let missing = ResumableDownload(url: server.url("missing.pkg"), partPath: folder.path("m.part"), expectedSize: 10,
                                        expectedSHA256: sha256Hex(Data()), retryPolicy: quickRetries)
        do {
            _ = try await missing.run(using: URLSessionTransport())
            Issue.record("a 404 must fail")
        } catch let error as TransportError {
            #expect(error == .status(404, url: server.url("missing.pkg").absoluteString))
            #expect(!error.isTransient)
            #expect(error.description.contains("HTTP 404"))
            #expect(error.diagnostic.code == .unreadableInput)
        }
        #expect(server.log.count == 1)
    }

    @Test(arguments: [FaultHTTPServer.LongBodyLength.absent, .includingExtra])
    func aLongerBodyIsRefusedAndNeverWritten(length: FaultHTTPServer.LongBodyLength) async throws {
        defer { server.stop() }
        server.always("p.pkg", .longBody(extra: 70_000, contentLength: length))
        do {
            _ = try await download().run(using: URLSessionTransport())
            Issue.record("a longer body must be refused")
        } catch let error as DownloadError {
            // Too long for its catalog size: refused from its head (size) or its body (too long).
            switch error {
            case .bodyTooLong, .sizeMismatch: break
            default: Issue.record("unexpected \(error)"); return
            }
            #expect(error.isRefusal)
            #expect(error.diagnostic.code == .checksumMismatch)
        }
        #expect((folder.size("p.part") ?? 0) <= Int64(data.count))
        #expect(server.log.count == 1, "a refusal is not retried")
    }

    @Test func aBodyLongerThanItsContentLengthStillGivesThePackage() async throws {
        defer { server.stop() }
        // HTTP clients read Content-Length bytes; the extra bytes are never handed over.
        server.plan("p.pkg", [.longBody(extra: 5_000, contentLength: .honest)])
        _ = try await download().run(using: URLSessionTransport())
        #expect(folder.contents("p.part") == data)
    }

    @Test func aWrongSHA256DeletesThePart() async throws {
        defer { server.stop() }
        let other = sha256Hex(Data("something else".utf8))
        do {
            _ = try await download(sha256: other).run(using: URLSessionTransport())
            Issue.record("a wrong sha256 must be refused")
        } catch let error as DownloadError {
            #expect(error == .checksumMismatch(url: server.url("p.pkg").absoluteString, expected: other, actual: sha256Hex(data)))
            #expect(error.diagnostic.code == .checksumMismatch)
        }
        #expect(!FileManager.default.fileExists(atPath: folder.path("p.part")))
    }

    @Test func aServerFileOfAnotherSizeIsRefused() async throws {
        defer { server.stop() }
        do {
            _ = try await download(size: Int64(data.count) + 10).run(using: URLSessionTransport())
            Issue.record("a size mismatch must be refused")
        } catch let error as DownloadError {
            guard case .sizeMismatch = error else { Issue.record("unexpected \(error)"); return }
        }
        #expect(!FileManager.default.fileExists(atPath: folder.path("p.part")))
    }

    @Test func aPartLongerThanThePackageStartsOver() async throws {
        defer { server.stop() }
        try folder.write("p.part", data + Data(repeating: 1, count: 10))
        let result = try await download().run(using: URLSessionTransport())
        #expect(folder.contents("p.part") == data)
        #expect(result.resumedFrom == 0)
        #expect(server.log.map(\.range) == [nil])
    }

    @Test func aCompletePartNeedsNoRequest() async throws {
        defer { server.stop() }
        try folder.write("p.part", data)
        let result = try await download().run(using: URLSessionTransport())
        #expect(result == ResumableDownload.Result(bytesDownloaded: 0, resumedFrom: Int64(data.count), attempts: 1))
        #expect(server.log.isEmpty)
    }

    @Test func aStalledServerTimesOut() async throws {
        defer { server.stop() }
        server.always("p.pkg", .stallAfter(bytes: 1_000))
        let transport = URLSessionTransport(configuration: .init(idleTimeout: 0.5))
        let start = Date()
        await #expect(throws: TransportError.timedOut(url: server.url("p.pkg").absoluteString)) {
            try await download(policy: .none).run(using: transport)
        }
        #expect(Date().timeIntervalSince(start) < 20, "an idle timeout of 0.5 s must not wait for the test's time limit")
        #expect(folder.size("p.part") == 1_000, "what arrived is kept for the next run")
    }

    @Test func aSlowServerIsNotIdle() async throws {
        defer { server.stop() }
        // Three seconds of body in slices 0.1 s apart, against an idle timeout of 2 s: the whole
        // transfer outlasts the timeout, yet no gap comes near it, even on a loaded machine.
        let small = pseudoRandomData(6_000, seed: 7)
        try folder.write("site/small.pkg", small)
        server.always("small.pkg", .slow(bytesPerSecond: 2_000))
        let transport = URLSessionTransport(configuration: .init(idleTimeout: 2))
        let job = ResumableDownload(url: server.url("small.pkg"), partPath: folder.path("s.part"), expectedSize: 6_000,
                                    expectedSHA256: sha256Hex(small), retryPolicy: .none)
        let start = Date()
        _ = try await job.run(using: transport)
        #expect(folder.contents("s.part") == small)
        #expect(Date().timeIntervalSince(start) > 2, "the transfer took longer than the idle timeout")
    }

    @Test func aBusyHandlerIsNotASilentServer() async throws {
        defer { server.stop() }
        // The first chunk's handler takes 2.5 s (a disk that stalls, or an app whose threads are
        // all busy: on Linux the delegate queue shares them with Swift's tasks) while the server
        // keeps sending. The bytes waiting behind it arrived: an idle timeout of 1 s must not fire.
        let small = pseudoRandomData(8_000, seed: 11)
        try folder.write("site/small.pkg", small)
        server.always("small.pkg", .slow(bytesPerSecond: 2_000))
        let transport = URLSessionTransport(configuration: .init(idleTimeout: 1))
        let body = ReceivedBody()
        _ = try await transport.get(HTTPRequest(url: server.url("small.pkg"), range: nil, maximumBodyBytes: Int64(small.count)),
                                    onResponse: { _ in }, onBody: { chunk in
            if body.data.isEmpty { usleep(2_500_000) }
            body.append(chunk)
        })
        #expect(body.data == small)
    }

    @Test func cancellationStopsAndKeepsThePart() async throws {
        defer { server.stop() }
        server.always("p.pkg", .slow(bytesPerSecond: 20_000))
        let job = download()
        let task = Task { try await job.run(using: URLSessionTransport()) }
        // Cancelled once some bytes are in, however busy the machine.
        let deadline = Date().addingTimeInterval(30)
        while (folder.size("p.part") ?? 0) == 0 && Date() < deadline { try await Task.sleep(nanoseconds: 10_000_000) }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        let kept = folder.size("p.part") ?? 0
        #expect(kept > 0 && kept < Int64(data.count))
        // The next run resumes where the cancelled one stopped.
        server.always("p.pkg", nil)
        let result = try await download().run(using: URLSessionTransport())
        #expect(folder.contents("p.part") == data)
        #expect(result.resumedFrom == kept)
    }

    @Test func twoDownloadsOfOnePartDoNotMix() async throws {
        defer { server.stop() }
        server.always("p.pkg", .slow(bytesPerSecond: 50_000))
        let job = download()
        let first = Task { try await job.run(using: URLSessionTransport()) }
        // The first holds the `.part` once its bytes arrive.
        let deadline = Date().addingTimeInterval(30)
        while (folder.size("p.part") ?? 0) == 0 && Date() < deadline { try await Task.sleep(nanoseconds: 10_000_000) }
        await #expect(throws: DownloadError.busy(path: folder.path("p.part"))) {
            try await download().run(using: URLSessionTransport())
        }
        first.cancel()
        _ = try? await first.value
    }

    @Test func localFilesResumeToo() async throws {
        defer { server.stop() }
        try folder.write("p.part", data.prefix(1_000))
        let job = ResumableDownload(url: URL(fileURLWithPath: folder.path("site/p.pkg")), partPath: folder.path("p.part"),
                                    expectedSize: Int64(data.count), expectedSHA256: sha256Hex(data))
        let result = try await job.run(using: StandardTransport())
        #expect(folder.contents("p.part") == data)
        #expect(result.resumedFrom == 1_000)
        #expect(result.bytesDownloaded == Int64(data.count - 1_000))
    }
}

@Suite struct TransportValueTests {
    @Test func contentRangeParsing() {
        #expect(ContentRange(headerValue: "bytes 100-199/1000") == ContentRange(first: 100, last: 199, total: 1000))
        #expect(ContentRange(headerValue: "bytes 0-9/*") == ContentRange(first: 0, last: 9, total: nil))
        #expect(ContentRange(headerValue: "bytes 10-9/100") == nil)
        #expect(ContentRange(headerValue: "bytes 0-99/99") == nil)
        #expect(ContentRange(headerValue: "items 0-9/10") == nil)
        #expect(ContentRange(headerValue: "bytes */100") == nil)
        #expect(ByteRange(first: 5).headerValue == "bytes=5-")
        #expect(ByteRange(first: 5, last: 9).headerValue == "bytes=5-9")
        #expect(ByteRange(first: 5, last: 9).count == 5)
    }

    @Test func retryPolicyBacksOffExponentially() {
        let policy = RetryPolicy(initialDelay: 0.5, multiplier: 2, maximumDelay: 3)
        #expect([1, 2, 3, 4, 5].map(policy.delay(beforeRetry:)) == [0.5, 1, 2, 3, 3])
        #expect(RetryPolicy.isTransient(TransportError.status(503, url: "u")))
        #expect(RetryPolicy.isTransient(TransportError.connectionLost(url: "u", "reset")))
        #expect(RetryPolicy.isTransient(TransportError.timedOut(url: "u")))
        #expect(!RetryPolicy.isTransient(TransportError.status(404, url: "u")))
        #expect(!RetryPolicy.isTransient(TransportError.bodyTooLong(url: "u", limit: 1)))
        #expect(!RetryPolicy.isTransient(CancellationError()))
    }

    @Test func catalogLocations() throws {
        let folder = try Scratch()
        try folder.write("pub/catalog.json", Data("{}".utf8))
        #expect(try CatalogLocation.url(for: folder.path("pub")).path == folder.path("pub/catalog.json"))
        #expect(try CatalogLocation.url(for: folder.path("pub/catalog.json")).path == folder.path("pub/catalog.json"))
        #expect(try CatalogLocation.url(for: "pub", relativeTo: folder.root).path == folder.path("pub/catalog.json"))
        #expect(try CatalogLocation.url(for: "https://cdn.example.com/c/catalog.json").absoluteString == "https://cdn.example.com/c/catalog.json")
        #expect(try CatalogLocation.url(for: "https://cdn.example.com/c/").absoluteString == "https://cdn.example.com/c/catalog.json")
        #expect(throws: TransportError.self) { try CatalogLocation.url(for: "ftp://example.com/catalog.json") }
    }
}
