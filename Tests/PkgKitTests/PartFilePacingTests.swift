import Foundation
@testable import PkgKit
import Testing
import TestSupport

/// A download an installer reads as it arrives is kept within a lead of the reads (issue 20):
/// bytes far ahead of the install would each take a page of memory of their own. The download
/// waits while it is that far ahead, goes on as soon as a read catches up, and never waits for a
/// reader that waits for it, that stopped reading, or whose task was cancelled.
@Suite struct PartFilePacingTests {
    static let lead: Int64 = 1 << 20
    let scratch: Scratch
    let part: PartFile

    init() throws {
        scratch = try Scratch()
        part = try PartFile(path: scratch.path("p.pkg.part"), size: 4 << 20, sha256: String(repeating: "0", count: 64),
                            tocSHA256: nil, url: "http://cdn.test/p.pkg")
        part.pace(within: Self.lead)
    }

    /// Starts the download's wait for room and returns once it is waiting.
    func waitingDownload() async -> Task<Void, Never> {
        let part = part
        let download = Task { await part.waitForRoom() }
        while !part.downloadIsWaiting { await Task.yield() }
        return download
    }

    /// Reads `count` bytes at `offset` on a thread of its own (a read may wait for its bytes).
    func readInBackground(_ count: Int, at offset: Int64) -> Task<Int, any Error> {
        let part = part
        return Task.detached {
            var buffer = [UInt8](repeating: 0, count: count)
            return try buffer.withUnsafeMutableBytes { try part.read(into: $0, at: offset) }
        }
    }

    @Test func theDownloadWaitsAtItsLeadUntilAReadCatchesUp() async throws {
        try part.append(Data(count: Int(Self.lead) - 1))
        // Within the lead: no wait.
        await part.waitForRoom()
        try part.append(Data(count: 1))
        let download = await waitingDownload()
        #expect(part.downloadIsWaiting)
        #expect(try await readInBackground(4096, at: 0).value == 4096)
        await download.value
        #expect(!part.downloadIsWaiting)
    }

    @Test func aReadWaitingForBytesNotWrittenLetsTheDownloadOn() async throws {
        try part.append(Data(count: Int(Self.lead)))
        let download = await waitingDownload()
        // A read of bytes past the end: if the download kept waiting, the two would wait forever.
        let read = readInBackground(4096, at: Self.lead)
        await download.value
        try part.append(Data(count: 4096))
        #expect(try await read.value == 4096)
    }

    @Test func aReaderThatStopsReadingNoLongerHoldsTheDownload() async throws {
        try part.append(Data(count: Int(Self.lead)))
        let download = await waitingDownload()
        part.stopPacing()
        await download.value
        try part.append(Data(count: Int(Self.lead) * 2))
        await part.waitForRoom()
        #expect(!part.downloadIsWaiting)
    }

    @Test func cancellingTheDownloadEndsItsWait() async throws {
        try part.append(Data(count: Int(Self.lead)))
        let download = await waitingDownload()
        download.cancel()
        await download.value
        #expect(!part.downloadIsWaiting)
    }

    @Test func aFailedFileNoLongerHoldsTheDownload() async throws {
        try part.append(Data(count: Int(Self.lead)))
        let download = await waitingDownload()
        part.fail(CancellationError())
        await download.value
    }
}
