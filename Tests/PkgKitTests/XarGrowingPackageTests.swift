import Crypto
import Foundation
import Testing
import TestSupport
@testable import PkgKit

/// A xar read through `PackageBytes` that is still arriving, front to back, as a download does:
/// reads block until their bytes are there, the whole package still reads and verifies the same,
/// and a source that fails part way makes reading fail cleanly, read-ahead threads and all.
@Suite struct XarGrowingPackageTests {
    /// A package whose bytes are released front to back by `release(upTo:)`: a read waits until
    /// every byte it asks for is released, and throws `Failed` once `fail()` is called instead.
    final class GrowingBytes: PackageBytes, @unchecked Sendable {
        // Unchecked: every `var` is touched only under `condition`.
        struct Failed: Error, CustomStringConvertible {
            var description: String { "the download failed" }
        }

        let data: [UInt8]
        var size: Int64 { Int64(data.count) }
        private let condition = NSCondition()
        private var released = 0
        private var failed = false
        private var finished = false
        /// Where the reads waiting now end; how many reads waited at all.
        private var waitingEnds: [Int] = []
        private(set) var waits = 0
        private(set) var reading = 0

        init(_ data: [UInt8]) { self.data = data }

        func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
            let start = Int(min(max(offset, 0), size))
            let end = min(start + buffer.count, data.count)
            condition.lock()
            reading += 1
            defer {
                reading -= 1
                condition.broadcast()
                condition.unlock()
            }
            if released < end && !failed {
                waits += 1
                waitingEnds.append(end)
                condition.broadcast()
                while released < end && !failed { condition.wait() }
                waitingEnds.remove(at: waitingEnds.firstIndex(of: end)!)
            }
            guard released >= end else { throw Failed() }
            data.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[start..<end])) }
            return end - start
        }

        /// Makes the bytes before `count` readable.
        func release(upTo count: Int) {
            condition.withLock {
                released = max(released, min(count, data.count))
                condition.broadcast()
            }
        }

        /// Every read of bytes not released throws from now on.
        func fail() {
            condition.withLock {
                failed = true
                condition.broadcast()
            }
        }

        /// The reading is over: `waitForBlockedRead` returns false from now on.
        func finish() {
            condition.withLock {
                finished = true
                condition.broadcast()
            }
        }

        /// Waits until some read waits for bytes not released (true), or `finish` (false).
        func waitForBlockedRead() -> Bool {
            condition.withLock {
                while !waitingEnds.contains(where: { $0 > released }) && !finished { condition.wait() }
                return !finished
            }
        }

        var releasedCount: Int { condition.withLock { released } }
    }

    /// Feeds `bytes` on a thread of its own: each time a read waits, `step` more bytes (up to
    /// `limit`), until everything up to `limit` is out or reading is over. Then, when `failing`,
    /// the next read that waits makes the source fail. Returns a wait for the feeder's end.
    static func feed(_ bytes: GrowingBytes, step: Int, upTo limit: Int, failing: Bool) -> () -> Void {
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            while bytes.releasedCount < limit, bytes.waitForBlockedRead() {
                bytes.release(upTo: min(limit, bytes.releasedCount + step))
            }
            if failing, bytes.waitForBlockedRead() { bytes.fail() }
            done.signal()
        }
        return { done.wait() }
    }

    static func open(_ bytes: GrowingBytes) throws -> XarReader {
        guard case .reader(let reader) = try XarReader.open(bytes, path: "growing.pkg", limits: PackageLimits()) else {
            throw ReadError.unreadable(path: nil, "pkgtool's own xar reader does not read it")
        }
        return reader
    }

    /// Read in steps of an odd size as it arrives, with every kind of read-ahead: the same entries
    /// and bytes as the finished file, nothing found wrong, and reads that had to wait.
    @Test(.timeLimit(.minutes(2)))
    func aPackageReadWhileItArrivesReadsWhole() throws {
        let dir = try Scratch()
        let path = try XarCrafter(XarReadAheadTests.mixed()).write(to: dir.path("p.pkg"))
        let data = try Array(Data(contentsOf: URL(fileURLWithPath: path)))
        let expected = try XarReadAheadTests.read(path, plan: nil)
        for plan in [nil, ReadAheadPlan.deliver, .verify] {
            let bytes = GrowingBytes(data)
            let fed = Self.feed(bytes, step: 100_003, upTo: data.count, failing: false)
            defer { bytes.finish(); fed() }
            let reader = try Self.open(bytes)
            if let plan { #expect(reader.startReadAhead(plan) == (XarReader.readAheadWorkers > 0)) }
            #expect(try XarReaderTests.read(reader) == expected, "\(String(describing: plan))")
            // Read-ahead asks for the far end early, and what lies before arrives with it; read in
            // order, one step arrives per wait.
            #expect(bytes.waits >= (plan == nil ? data.count / 100_003 : 2), "\(String(describing: plan))")
        }
        // Verified as validate verifies, with and without digests of its own.
        for digests in [false, true] {
            let bytes = GrowingBytes(data)
            let fed = Self.feed(bytes, step: 65_537, upTo: data.count, failing: false)
            defer { bytes.finish(); fed() }
            var facts = PackageFacts()
            try PackageScanner(digests: digests).scan(Self.open(bytes), into: &facts)
            #expect(facts.readFailures == [], "digests \(digests)")
            #expect(facts.entries.filter { $0.kind == .file }.count == expected.filter { $0.kind == .file }.count)
            if digests {
                let sums = Dictionary(uniqueKeysWithValues: expected.map { ($0.path, $0.sha1) })
                for entry in facts.entries where entry.kind == .file { #expect(entry.sha1 == sums[entry.path.string] ?? nil, "\(entry.path)") }
            }
        }
    }

    /// The download fails half way through the heap, while readers wait for it: reading throws the
    /// source's failure as the input failing, on the reader's thread, and the reader goes away
    /// with no read left under way, whatever read ahead. Failing inside the TOC fails the open.
    @Test(.timeLimit(.minutes(2)))
    func aSourceFailingMidHeapFailsTheReadCleanly() throws {
        let dir = try Scratch()
        let path = try XarCrafter(XarReadAheadTests.mixed()).write(to: dir.path("p.pkg"))
        let data = try Array(Data(contentsOf: URL(fileURLWithPath: path)))
        let toc = try XarTableOfContents.read(path)
        let failure = ReadError.io(path: "growing.pkg", "the download failed")
        for plan in [nil, ReadAheadPlan.deliver, .verify] {
            let bytes = GrowingBytes(data)
            let fed = Self.feed(bytes, step: 50_021, upTo: Int(toc.heapStart) + (data.count - Int(toc.heapStart)) / 2, failing: true)
            do {
                let reader = try Self.open(bytes)
                if let plan { _ = reader.startReadAhead(plan) }
                #expect(throws: failure, "\(String(describing: plan))") { try XarReaderTests.read(reader) }
            }
            bytes.finish()
            fed()
            #expect(bytes.reading == 0, "\(String(describing: plan))")
            #expect(bytes.releasedCount < data.count)
        }
        // Through the scanner, as validate and extract read: the failure is thrown, not reported
        // as a finding about the package.
        let bytes = GrowingBytes(data)
        let fed = Self.feed(bytes, step: 50_021, upTo: data.count / 2, failing: true)
        var facts = PackageFacts()
        #expect(throws: failure) { try PackageScanner(digests: false).scan(Self.open(bytes), into: &facts) }
        bytes.finish()
        fed()
        #expect(bytes.reading == 0)

        let early = GrowingBytes(data)
        let fedEarly = Self.feed(early, step: 1_000, upTo: 2_000, failing: true)
        #expect(throws: failure) { try Self.open(early) }
        early.finish()
        fedEarly()
        #expect(early.reading == 0)
    }

    /// A file opened through `PackageFile` reads as `open(path:)` reads it, and its failures are
    /// the system's words on its path.
    @Test func aPackageFileIsWhatOpeningByPathReads() throws {
        let dir = try Scratch()
        let path = try XarCrafter(XarReadAheadTests.mixed()).write(to: dir.path("p.pkg"))
        guard case .reader(let reader) = try XarReader.open(PackageFile(path: path), path: path, limits: PackageLimits()) else {
            Issue.record("pkgtool's own xar reader does not read it")
            return
        }
        #expect(try XarReaderTests.read(reader) == XarReadAheadTests.read(path, plan: nil))
        let missing = dir.path("missing.pkg")
        #expect(throws: ReadError.io(path: missing, String(cString: strerror(ENOENT)))) { try PackageFile(path: missing) }
        #expect(throws: XarTOCError.unreadable(String(cString: strerror(ENOENT)))) { try XarTableOfContents.read(missing) }
    }
}
