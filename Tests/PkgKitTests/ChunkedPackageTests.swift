import Foundation
import Testing
import TestSupport
@testable import PkgKit

/// Packages whose large files `create` cut into chunks: what their TOC holds, that each chunk's
/// stored bytes decode on their own, and that other xar readers read them as any package.
@Suite(.offThePool, .timeLimit(.minutes(2))) struct ChunkedPackageTests {
    let scratch: Scratch
    let text = compressibleText(5 << 20, seed: 11)
    let noise = randomData(4_500_000)

    init() throws { scratch = try Scratch() }

    func make(_ name: String, _ arguments: String...) throws -> String {
        try scratch.package(name, version: "1.0", files: ["big.txt": text, "noise.bin": noise, "small.txt": Data("small\n".utf8)],
                            extraArguments: arguments).pkg
    }

    /// At level 2 the stream is ISA-L's where it is linked, at 6 zlib's.
    @Test(arguments: ["2", "6"]) func largeFilesCarryATableWhoseChunksDecodeOnTheirOwn(level: String) throws {
        let package = try make("p", "--level", level)
        let toc = try XarTableOfContents.read(package)
        #expect(toc.entry("Contents/small.txt")?.chunks == nil)
        let stored = try #require(toc.entry("Contents/noise.bin")?.chunks)
        #expect(stored.dataStart == 0 && stored.chunks.allSatisfy { $0.size == $0.storedLength })
        let entry = try #require(toc.entry("Contents/big.txt"))
        let table = try #require(entry.chunks)
        #expect(entry.encoding == "application/x-gzip" && table.dataStart == 2 && table.count > 4)
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: package))
        defer { try? handle.close() }
        var at = toc.heapStart + entry.offset! + table.dataStart
        var rebuilt = Data()
        let inflater = Inflater()
        for chunk in table.chunks {
            try handle.seek(toOffset: UInt64(at))
            let bytes = [0x78, 0x01] + [UInt8](try handle.read(upToCount: chunk.storedLength) ?? Data())
            at += Int64(chunk.storedLength)
            // Inflated alone, with no byte of the chunks before it.
            inflater.reset()
            var output = [UInt8](repeating: 0, count: chunk.size + 1)
            let count = bytes.withUnsafeBytes { input in
                inflater.supply(input)
                return output.withUnsafeMutableBytes { inflater.inflate(into: $0).count }
            }
            #expect(count == chunk.size)
            var hasher = ChunkHasher()
            output.withUnsafeBytes { hasher.update(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
            #expect(hasher.digest == chunk.digest)
            rebuilt += output[0..<count]
        }
        #expect(rebuilt == text)
    }

    @Test(arguments: ["2", "6"]) func bsdtarExtractsAChunkedPackageByteIdentically(level: String) throws {
        _ = try make("p", "--level", level)
        try CommandRunner.shell("mkdir x && bsdtar -xf p.pkg -C x && cmp x/Contents/big.txt src-p/Contents/big.txt && cmp x/Contents/noise.bin src-p/Contents/noise.bin && diff -r x/Contents src-p/Contents",
                                in: scratch.url)
    }

    @Test func theSameBytesForEveryJobCountAndNoTablesWhenTurnedOff() throws {
        let one = try make("one", "--jobs", "1"), four = try make("four", "--jobs", "4")
        #expect(try Data(contentsOf: URL(fileURLWithPath: one)) == Data(contentsOf: URL(fileURLWithPath: four)))
        let plain = try make("plain", "--no-chunks")
        #expect(try XarTableOfContents.read(plain).entries.allSatisfy { $0.chunks == nil })
        // Chunks cost a compressed file little (this text, whose words recur all through it, more
        // than most: every flush forgets them).
        let chunked = try FileManager.default.attributesOfItem(atPath: one)[.size] as! Int
        let unchunked = try FileManager.default.attributesOfItem(atPath: plain)[.size] as! Int
        #expect(Double(chunked) < Double(unchunked) * 1.03, "\(chunked) against \(unchunked)")
    }
}
