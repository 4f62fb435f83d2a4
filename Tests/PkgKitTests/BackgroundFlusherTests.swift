import Foundation
import Testing
import TestSupport
@testable import PkgKit

/// Writers flush to the device in the background every `BackgroundFlusher.step` bytes, one flush
/// at a time, so that the final flush of an install or a package finds little left; what they
/// write must come out the same.
@Suite struct BackgroundFlusherTests {
    static let step = Int(BackgroundFlusher.step)

    @Test func aFlushStartsEachTimeAStepHasGathered() throws {
        let dir = try Scratch()
        let descriptor = open(dir.path("data"), O_WRONLY | O_CREAT, 0o644)
        #expect(descriptor >= 0)
        defer { close(descriptor) }
        let flusher = BackgroundFlusher(descriptor: descriptor, scope: .file)
        flusher.wrote(BackgroundFlusher.step - 1)
        #expect(flusher.flushesStarted == 0)
        flusher.wrote(1)
        #expect(flusher.flushesStarted == 1)
        flusher.wait()
        // What was counted went with the last flush: a new step starts from nothing.
        flusher.wrote(BackgroundFlusher.step / 2)
        #expect(flusher.flushesStarted == 1)
        flusher.wrote(BackgroundFlusher.step / 2)
        #expect(flusher.flushesStarted == 2)
        flusher.wait()
    }

    @Test func anInstallFlushesAsItWritesAndEveryByteArrives() throws {
        let dir = try Scratch()
        let product = open(try dir.mkdir("product"), O_RDONLY | O_DIRECTORY)
        #expect(product >= 0)
        defer { close(product) }
        let writer = try StagingWriter(product: product, name: "staging", productPath: dir.path("product"))
        // One large file of 2½ steps, then small files worth one more step in creations alone.
        var big = [UInt8](repeating: 0, count: Self.step * 5 / 2)
        for index in big.indices where index % 4096 == 0 { big[index] = UInt8(truncatingIfNeeded: index / 4096) }
        try writer.begin(ArchiveEntry(path: ArchivePath("Contents/big.bin"), kind: .file, mode: 0o644))
        for start in stride(from: 0, to: big.count, by: 1 << 20) {
            try big[start..<min(start + (1 << 20), big.count)].withUnsafeBytes { try writer.write($0) }
        }
        try writer.end()
        let small = Self.step / Int(StagingWriter.fileCost) + 1
        try writer.begin(ArchiveEntry(path: ArchivePath("Contents/small"), kind: .directory, mode: 0o755))
        for index in 0..<small {
            try writer.begin(ArchiveEntry(path: ArchivePath("Contents/small/\(index).txt"), kind: .file, mode: 0o644))
            try Array("file \(index)\n".utf8).withUnsafeBytes { try writer.write($0) }
            try writer.end()
        }
        #if os(Linux)
        // 3½ steps in all; flushes run one at a time, so one to three start, however fast the disk is.
        #expect(writer.flusher.flushesStarted >= 1)
        #expect(writer.flusher.flushesStarted <= 3)
        #endif
        try writer.finish()
        let staged = dir.path("product/staging")
        #expect(try Data(contentsOf: URL(fileURLWithPath: staged + "/big.bin")) == Data(big))
        #expect(try FileManager.default.contentsOfDirectory(atPath: staged + "/small").count == small)
        #expect(try String(contentsOfFile: staged + "/small/\(small - 1).txt", encoding: .utf8) == "file \(small - 1)\n")
    }

    @Test func aPackageIsFlushedAsItIsWrittenAndSyncWaitsForTheFlush() throws {
        let dir = try Scratch()
        let descriptor = open(dir.path("out.pkg"), O_RDWR | O_CREAT, 0o644)
        #expect(descriptor >= 0)
        let output = FileOutput(descriptor: descriptor, path: dir.path("out.pkg"))
        let block = [UInt8](repeating: 0x5A, count: 1 << 20)
        for _ in 0..<(2 * Self.step >> 20) {
            try output.write(block)
            output.startWriteback()
        }
        try output.flushToDevice()
        #expect(output.backgroundFlushes >= 1)
        #expect(output.backgroundFlushes <= 2)
        #expect(try FileManager.default.attributesOfItem(atPath: dir.path("out.pkg"))[.size] as? Int == 2 * Self.step)
    }
}
