import Foundation
import Testing
@testable import PkgKit

/// The writing thread of `extract`: everything arrives in order and intact however far the
/// reader runs ahead, and a failure stops the pass instead of being lost.
@Suite struct BackgroundSinkTests {
    // Unchecked: only the sink's writing thread calls it, and the test reads it after `drain`.
    final class Recorder: EntrySink, @unchecked Sendable {
        var log: [String] = []
        var bytes: [UInt8] = []
        var failAtBegin: Int?
        private var begins = 0

        struct Refused: Error, Equatable {}

        func begin(_ entry: ArchiveEntry) throws {
            begins += 1
            if begins == failAtBegin { throw Refused() }
            log.append("begin \(entry.path)")
        }
        func write(_ chunk: UnsafeRawBufferPointer) throws { bytes += chunk }
        func end() throws { log.append("end") }
    }

    @Test func everythingArrivesInOrderPastTheQueueBound() throws {
        let recorder = Recorder()
        let sink = BackgroundSink(recorder)
        var sent: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 300_000)
        // 40 files of 900 KB: far more than the queue holds, so the reader must wait.
        for file in 0..<40 {
            try sink.begin(ArchiveEntry(path: ArchivePath("Contents/\(file)"), kind: .file, mode: 0o644))
            for part in 0..<3 {
                for index in chunk.indices { chunk[index] = UInt8(truncatingIfNeeded: file &* 7 &+ part &+ index) }
                try chunk.withUnsafeBytes { try sink.write($0) }
                sent += chunk
            }
            try sink.end()
        }
        try sink.drain()
        #expect(recorder.bytes == sent)
        #expect(recorder.log == (0..<40).flatMap { ["begin Contents/\($0)", "end"] })
    }

    @Test func aWriteFailureIsThrownToTheReaderAndByDrain() throws {
        let recorder = Recorder()
        recorder.failAtBegin = 3
        let sink = BackgroundSink(recorder)
        var thrown = false
        for file in 0..<10_000 where !thrown {
            do {
                try sink.begin(ArchiveEntry(path: ArchivePath("Contents/\(file)"), kind: .file, mode: 0o644))
                try [UInt8](repeating: 1, count: 1000).withUnsafeBytes { try sink.write($0) }
                try sink.end()
            } catch is Recorder.Refused {
                thrown = true
            }
        }
        #expect(thrown)
        #expect(throws: Recorder.Refused.self) { try sink.drain() }
        // Nothing after the failure was written.
        #expect(recorder.log == ["begin Contents/0", "end", "begin Contents/1", "end"])
    }
}
