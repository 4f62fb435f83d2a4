import Foundation
import Testing
import TestSupport
@testable import PkgKit

/// Counts the data bytes a reader hands out.
final class CountingReader: PackageReader {
    let inner: PackageReader
    private(set) var bytesRead: Int64 = 0
    init(_ inner: PackageReader) { self.inner = inner }
    var format: PackageFormat { inner.format }
    var progress: (done: Int64, total: Int64) { inner.progress }
    func nextEntry() throws -> ArchiveEntry? { try inner.nextEntry() }
    func readData(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        let count = try inner.readData(into: buffer)
        bytesRead += Int64(count)
        return count
    }
}

@Suite struct BombTests {
    static let bomb = [UInt8](repeating: 0, count: 64 << 20)
    static let maxSize: Int64 = 1 << 20

    private func scan(_ path: String) throws -> (PackageFacts, [Diagnostic], Int64) {
        let limits = PackageLimits(maxSize: Self.maxSize)
        var opened = try PackageOpener.open(path, limits: limits)
        let counter = CountingReader(opened.reader)
        try PackageScanner(limits: limits, depth: .full).scan(counter, into: &opened.facts)
        let diagnostics = Rules.check(opened.facts, RuleContext(purpose: .validate, limits: limits))
        return (opened.facts, diagnostics, counter.bytesRead)
    }

    private func write(_ files: [XarCrafter.File], _ dir: Scratch) throws -> String {
        let path = try XarCrafter(files).write(to: dir.path("bomb.pkg"))
        let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as! Int
        #expect(Int64(size) < Self.maxSize, "the bomb should be small on disk")
        return path
    }

    @Test(.timeLimit(.minutes(2)))
    func honestBombStopsAtTheLimit() throws {
        let dir = try Scratch()
        let path = try write(Make.valid([XarCrafter.File(path: "Contents/zeros", data: Self.bomb)]), dir)
        let (_, diagnostics, read) = try scan(path)
        #expect(diagnostics.contains { $0.code == .sizeLimit })
        #expect(read <= Self.maxSize + Int64(PackageScanner.bufferSize))
        let check = try PackageCheck.run(path, context: RuleContext(purpose: .validate, limits: PackageLimits(maxSize: Self.maxSize)))
        #expect(Set(check.diagnostics.map(\.code)).contains(.sizeLimit))
    }

    /// The TOC says 1000 bytes; the stream inflates to 64 MiB.
    @Test(.timeLimit(.minutes(2)))
    func lyingBombStopsAtTheLimit() throws {
        let dir = try Scratch()
        let path = try write(Make.valid([XarCrafter.File(path: "Contents/zeros", data: Self.bomb, declaredSize: 1000)]), dir)
        let (_, diagnostics, read) = try scan(path)
        #expect(diagnostics.failing())
        #expect(diagnostics.contains { $0.code == .sizeLimit || $0.code == .unreadableArchive })
        #expect(read <= Self.maxSize + Int64(PackageScanner.bufferSize))
    }

    /// Many files each under the limit, together over it.
    @Test(.timeLimit(.minutes(2)))
    func totalOverTheLimitStops() throws {
        let dir = try Scratch()
        let chunk = [UInt8](repeating: 0, count: 512 << 10)
        let files = (0..<16).map { XarCrafter.File(path: "Contents/z\($0)", data: chunk) }
        let path = try write(Make.valid(files), dir)
        let (_, diagnostics, read) = try scan(path)
        #expect(diagnostics.contains { $0.code == .sizeLimit })
        #expect(read <= Self.maxSize + Int64(PackageScanner.bufferSize))
    }

    @Test func underTheLimitIsFine() throws {
        let dir = try Scratch()
        let path = try write(Make.valid([XarCrafter.File(path: "Contents/zeros", data: [UInt8](repeating: 0, count: 512 << 10))]), dir)
        let (facts, diagnostics, read) = try scan(path)
        #expect(diagnostics.isEmpty, "\(diagnostics)")
        #expect(facts.payloadBytes == (512 << 10) + 5)
        #expect(read == (512 << 10) + Int64(XarCrafter.plist().count) + 5)
    }
}
