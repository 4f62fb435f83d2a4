import Foundation
import Testing
@testable import PkgKit
import TestSupport

/// The resumable download against a scripted server: every fault ends with the right bytes in
/// the `.part`, or a clear error and a `.part` never longer than the package. In memory, on a
/// manual clock: no socket, no sleep.
@Suite struct ResumableDownloadTests {
    let folder: Scratch
    let data = pseudoRandomData(300_000)
    static let base = URL(string: "http://cdn.test/site/")!
    let faults = ScriptedTransport.FaultPlan()
    let transport: ScriptedTransport

    init() throws {
        folder = try Scratch()
        try folder.write("site/p.pkg", data)
        transport = ScriptedTransport(serving: folder.path("site"), base: Self.base, faults: faults)
    }

    func url(_ name: String) -> URL { Self.base.appendingPathComponent(name) }

    func download(sha256: String? = nil, size: Int64? = nil, policy: RetryPolicy = instantRetries) -> ResumableDownload {
        ResumableDownload(url: url("p.pkg"), partPath: folder.path("p.part"), expectedSize: size ?? Int64(data.count),
                          expectedSHA256: sha256 ?? sha256Hex(data), retryPolicy: policy,
                          transferPolicy: TransferPolicy(clock: transport.clock))
    }

    var ranges: [String?] { transport.exchanges.map { $0.request.range?.headerValue } }
    var statuses: [Int?] { transport.exchanges.map(\.status) }

    @Test func plainDownloadReportsProgress() async throws {
        let progress = ProgressLog()
        let result = try await download().run(using: transport) { progress.record($0, $1) }
        #expect(folder.contents("p.part") == data)
        #expect(result == ResumableDownload.Result(bytesDownloaded: Int64(data.count), resumedFrom: 0, attempts: 1))
        let reports = progress.all
        #expect(reports.first.map { $0.0 } == 0)
        #expect(reports.last.map { $0.0 } == Int64(data.count))
        #expect(reports.allSatisfy { $0.1 == Int64(data.count) })
        #expect(zip(reports, reports.dropFirst()).allSatisfy { $0.0 <= $1.0 })
        #expect(ranges == [nil])
    }

    @Test func resumesAfterADroppedConnection() async throws {
        faults.plan("p.pkg", [.dropAfter(bytes: 100_000)])
        let result = try await download().run(using: transport)
        #expect(folder.contents("p.part") == data)
        #expect(ranges == [nil, "bytes=100000-"])
        #expect(statuses == [200, 206])
        #expect(transport.exchanges.map(\.bytesSent) == [100_000, 200_000])
        #expect(result.bytesDownloaded == Int64(data.count))
        #expect(result.attempts == 2)
    }

    @Test func resumesAcrossRunsFromAnExistingPart() async throws {
        try folder.write("p.part", data.prefix(120_000))
        let result = try await download().run(using: transport)
        #expect(folder.contents("p.part") == data)
        #expect(result == ResumableDownload.Result(bytesDownloaded: Int64(data.count - 120_000), resumedFrom: 120_000, attempts: 1))
        #expect(ranges == ["bytes=120000-"])
        #expect(transport.exchanges.map(\.bytesSent) == [Int64(data.count - 120_000)])
    }

    @Test func aServerIgnoringRangeRestartsFromZero() async throws {
        // A prefix that is not the package's: a 200 must replace it, not append to it.
        try folder.write("p.part", Data(repeating: 0xEE, count: 50_000))
        faults.plan("p.pkg", [.ignoreRange])
        let result = try await download().run(using: transport)
        #expect(folder.contents("p.part") == data)
        #expect(result.resumedFrom == 0)
        #expect(result.bytesDownloaded == Int64(data.count))
        #expect(statuses == [200])
        #expect(ranges == ["bytes=50000-"])
    }

    @Test func a503IsRetried() async throws {
        faults.plan("p.pkg", [.status(503), .status(503)])
        let result = try await download().run(using: transport)
        #expect(folder.contents("p.part") == data)
        #expect(result.attempts == 3)
        #expect(statuses == [503, 503, 200])
    }

    @Test func endless503sGiveUpAfterTheAttempts() async throws {
        faults.always("p.pkg", .status(503))
        await #expect(throws: TransportError.status(503, url: url("p.pkg").absoluteString)) {
            try await download().run(using: transport)
        }
        #expect(transport.exchanges.count == instantRetries.maximumAttempts)
    }

    @Test func a404IsNotRetried() async throws {
        let missing = ResumableDownload(url: url("missing.pkg"), partPath: folder.path("m.part"), expectedSize: 10,
                                        expectedSHA256: sha256Hex(Data()), retryPolicy: instantRetries,
                                        transferPolicy: TransferPolicy(clock: transport.clock))
        do {
            _ = try await missing.run(using: transport)
            Issue.record("a 404 must fail")
        } catch let error as TransportError {
            #expect(error == .status(404, url: url("missing.pkg").absoluteString))
            #expect(!error.isTransient)
            #expect(error.description.contains("HTTP 404"))
            #expect(error.diagnostic.code == .unreadableInput)
        }
        #expect(transport.exchanges.count == 1)
    }

    @Test(arguments: [FaultHTTPServer.LongBodyLength.absent, .includingExtra])
    func aLongerBodyIsRefusedAndNeverWritten(length: FaultHTTPServer.LongBodyLength) async throws {
        faults.always("p.pkg", .longBody(extra: 70_000, contentLength: length))
        do {
            _ = try await download().run(using: transport)
            Issue.record("a longer body must be refused")
        } catch let error as DownloadError {
            // Too long for its catalog size: refused from its head (size) or its body (too long).
            switch error {
            case .bodyTooLong, .sizeMismatch: break
            default: Issue.record("unexpected \(error)"); return
            }
            #expect(error.disposition == .refused)
            #expect(error.diagnostic.code == .checksumMismatch)
        }
        #expect((folder.size("p.part") ?? 0) <= Int64(data.count))
        #expect(transport.exchanges.count == 1, "a refusal is not retried")
    }

    @Test func aBodyLongerThanItsContentLengthStillGivesThePackage() async throws {
        // HTTP clients read Content-Length bytes; the extra bytes are never handed over.
        faults.plan("p.pkg", [.longBody(extra: 5_000, contentLength: .honest)])
        _ = try await download().run(using: transport)
        #expect(folder.contents("p.part") == data)
    }

    @Test func aWrongSHA256DeletesThePart() async throws {
        let other = sha256Hex(Data("something else".utf8))
        do {
            _ = try await download(sha256: other).run(using: transport)
            Issue.record("a wrong sha256 must be refused")
        } catch let error as DownloadError {
            #expect(error == .checksumMismatch(url: url("p.pkg").absoluteString, expected: other, actual: sha256Hex(data)))
            #expect(error.diagnostic.code == .checksumMismatch)
        }
        #expect(!FileManager.default.fileExists(atPath: folder.path("p.part")))
    }

    @Test func aServerFileOfAnotherSizeIsRefused() async throws {
        do {
            _ = try await download(size: Int64(data.count) + 10).run(using: transport)
            Issue.record("a size mismatch must be refused")
        } catch let error as DownloadError {
            guard case .sizeMismatch = error else { Issue.record("unexpected \(error)"); return }
        }
        #expect(!FileManager.default.fileExists(atPath: folder.path("p.part")))
    }

    @Test func aPartLongerThanThePackageStartsOver() async throws {
        try folder.write("p.part", data + Data(repeating: 1, count: 10))
        let result = try await download().run(using: transport)
        #expect(folder.contents("p.part") == data)
        #expect(result.resumedFrom == 0)
        #expect(ranges == [nil])
    }

    @Test func aCompletePartNeedsNoRequest() async throws {
        try folder.write("p.part", data)
        let result = try await download().run(using: transport)
        #expect(result == ResumableDownload.Result(bytesDownloaded: 0, resumedFrom: Int64(data.count), attempts: 1))
        #expect(transport.exchanges.isEmpty)
    }

    @Test func aStalledServerTimesOutAndKeepsWhatArrived() async throws {
        faults.always("p.pkg", .stallAfter(bytes: 1_000))
        let job = Task { try await download(policy: .none).run(using: transport) }
        await transport.stalls(atLeast: 1)
        transport.clock.advance(by: .seconds(30))
        await #expect(throws: TransportError.timedOut(url: url("p.pkg").absoluteString)) { try await job.value }
        #expect(folder.size("p.part") == 1_000, "what arrived is kept for the next run")
    }

    @Test func aStallIsRetriedAndResumed() async throws {
        faults.plan("p.pkg", [.stallAfter(bytes: 70_000)])
        let job = Task { try await download().run(using: transport) }
        await transport.stalls(atLeast: 1)
        transport.clock.advance(by: .seconds(30))
        let result = try await job.value
        #expect(folder.contents("p.part") == data)
        #expect(ranges == [nil, "bytes=70000-"])
        #expect(result.attempts == 2)
    }

    @Test func aWrongContentRangeIsRefusedAndThePartDeleted() async throws {
        try folder.write("p.part", data.prefix(10_000))
        faults.plan("p.pkg", [.wrongContentRange])
        await #expect(throws: DownloadError.self) { try await download().run(using: transport) }
        #expect(!FileManager.default.fileExists(atPath: folder.path("p.part")))
    }

    @Test func cancellationStopsAndKeepsThePart() async throws {
        faults.plan("p.pkg", [.stallAfter(bytes: 50_000)])
        let task = Task { try await download().run(using: transport) }
        await transport.stalls(atLeast: 1)
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(folder.size("p.part") == 50_000)
        #expect(transport.exchanges.map(\.cancelled) == [true])
        // The next run resumes where the cancelled one stopped.
        let result = try await download().run(using: transport)
        #expect(folder.contents("p.part") == data)
        #expect(result.resumedFrom == 50_000)
    }

    @Test func twoDownloadsOfOnePartDoNotMix() async throws {
        faults.plan("p.pkg", [.stallAfter(bytes: 10_000)])
        let first = Task { try await download().run(using: transport) }
        // The first holds the `.part` while it waits on the server.
        await transport.stalls(atLeast: 1)
        await #expect(throws: DownloadError.busy(path: folder.path("p.part"))) {
            try await download().run(using: transport)
        }
        first.cancel()
        _ = try? await first.value
    }

    @Test func localFilesResumeToo() async throws {
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
        #expect(ByteRange(from: 5).headerValue == "bytes=5-")
        #expect(ByteRange(5 ..< 10).headerValue == "bytes=5-9")
        #expect(ByteRange(5 ..< 10).count == 5)
        #expect(ContentRange(first: 5, last: 9, total: 20).range == 5 ..< 10)
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
        // A folder URL, with or without its slash (SPEC section 7).
        #expect(try CatalogLocation.url(for: "https://cdn.example.com/c").absoluteString == "https://cdn.example.com/c/catalog.json")
        #expect(try CatalogLocation.url(for: "https://cdn.example.com").absoluteString == "https://cdn.example.com/catalog.json")
        #expect(try CatalogLocation.url(for: "https://cdn.example.com/c/other.json").absoluteString == "https://cdn.example.com/c/other.json")
        #expect(throws: CatalogLocation.Problem.unsupported("ftp://example.com/catalog.json")) {
            try CatalogLocation.url(for: "ftp://example.com/catalog.json")
        }
        // A package is extract's: by its name, or by its bytes whatever its name.
        #expect(throws: CatalogLocation.Problem.package("https://cdn.example.com/c/1.0.pkg")) {
            try CatalogLocation.url(for: "https://cdn.example.com/c/1.0.pkg")
        }
        try folder.write("levels.zip", Data([0x50, 0x4B, 0x03, 0x04]) + Data(count: 100))
        #expect(throws: CatalogLocation.Problem.package("levels.zip")) { try CatalogLocation.url(for: "levels.zip", relativeTo: folder.root) }
        #expect(throws: CatalogLocation.Problem.package("x.pkg")) { try CatalogLocation.url(for: "x.pkg", relativeTo: folder.root) }
    }
}
