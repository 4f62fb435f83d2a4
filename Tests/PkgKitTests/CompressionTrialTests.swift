import Foundation
import Testing
import TestSupport
@testable import PkgKit
@testable import PkgKitFormat

/// How `auto` decides whether a file is worth compressing: a level-1 pass over its first 16 KiB,
/// and over its first 64 KiB only when those do not shrink.
@Suite struct CompressionTrialTests {
    let scratch = EncoderScratch(profile: DeflateProfile(level: 5))

    func worth(_ data: Data) throws -> Bool {
        try data.withUnsafeBytes { try FileEncoder.worthCompressing($0, scratch: scratch) }
    }

    @Test func textIsWorthItAndNoiseIsNot() throws {
        #expect(try worth(compressibleText(64 * 1024, seed: 1)))
        #expect(try !worth(pseudoRandomData(64 * 1024, seed: 2)))
    }

    /// A file that starts with 20 KiB of compressed bytes (a thumbnail, a header) and goes on
    /// in text is still compressed: the first 16 KiB alone would say no.
    @Test func aCompressedStartIsNotTheWholeStory() throws {
        var data = pseudoRandomData(20 * 1024, seed: 3)
        data.append(compressibleText(44 * 1024, seed: 4))
        #expect(try worth(data))
        #expect(try !worth(data.prefix(16 * 1024)))
    }

    /// Data that repeats only beyond 16 KiB (random 16 KiB written four times) is found on 64 KiB.
    @Test func repeatsFurtherInAreFound() throws {
        let block = pseudoRandomData(16 * 1024, seed: 5)
        #expect(try !worth(block))
        #expect(try worth(block + block + block + block))
    }
}
