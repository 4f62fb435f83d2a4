import Testing
@testable import PkgKit

/// Which engine compresses which file at each level: libdeflate in one call up to 4 MiB, ISA-L
/// streaming at the fast levels, zlib for the rest, and zlib alone where neither is linked.
@Suite struct DeflateProfileTests {
    @Test func theDefaultIsLevelFive() {
        #expect(WriteOptions.defaultLevel == 5)
        #expect(WriteOptions().level == 5)
    }

    /// Large files stream at zlib's level 6 or above: zlib's 4 and 5 would make them larger
    /// than bsdtar's.
    @Test func levelsFourToNineUseLibdeflateUpTo4MiBAndZlibSixOrMoreBeyond() {
        let expected: [Int32: (libdeflate: Int32, zlib: Int32)] = [4: (4, 6), 5: (5, 6), 6: (6, 6), 7: (8, 7), 8: (10, 8), 9: (12, 9)]
        for (level, engines) in expected {
            let profile = DeflateProfile(level: level, libdeflate: true, isal: true)
            #expect(profile.engine(forSize: 1) == .libdeflate(engines.libdeflate))
            #expect(profile.engine(forSize: 4 << 20) == .libdeflate(engines.libdeflate))
            #expect(profile.engine(forSize: (4 << 20) + 1) == .zlib(engines.zlib))
            #expect(profile.streaming == .zlib(engines.zlib))
        }
    }

    @Test func theFastLevelsStreamThroughISALFrom64KiB() {
        for level: Int32 in 1 ... 3 {
            let profile = DeflateProfile(level: level, libdeflate: true, isal: true)
            #expect(profile.engine(forSize: 64 * 1024 - 1) == .libdeflate(1))
            #expect(profile.engine(forSize: 64 * 1024) == .isal(level))
            #expect(profile.engine(forSize: 1 << 30) == .isal(level))
        }
    }

    @Test func withoutTheFastLibrariesZlibDoesEverythingAtTheLevelGivenOrSix() {
        for level: Int32 in 1 ... 9 {
            let profile = DeflateProfile(level: level, libdeflate: false, isal: false)
            let zlib: Int32 = (4 ... 6).contains(level) ? 6 : level
            #expect(profile.whole == nil)
            #expect(profile.engine(forSize: 1) == .zlib(zlib))
            #expect(profile.engine(forSize: 1 << 30) == .zlib(zlib))
        }
        // Without ISA-L the fast levels are libdeflate's in one call, and zlib's beyond.
        #expect(DeflateProfile(level: 2, libdeflate: true, isal: false).engine(forSize: 1 << 20) == .libdeflate(2))
        #expect(DeflateProfile(level: 2, libdeflate: true, isal: false).engine(forSize: 8 << 20) == .zlib(2))
    }

    @Test func levelsOutsideOneToNineAreClamped() {
        #expect(DeflateProfile(level: 0, libdeflate: false, isal: false).level == 1)
        #expect(DeflateProfile(level: 12, libdeflate: false, isal: false).level == 9)
    }

    /// What every engine writes is a zlib stream that inflates back to the input.
    @Test func everyEngineRoundTrips() throws {
        let input = Array(String(repeating: "a line of text, then another one\n", count: 5_000).utf8)
        for level: Int32 in 1 ... 9 {
            let profile = DeflateProfile(level: level)
            var stream: [UInt8] = []
            let deflater = profile.makeStreamDeflater()
            try input.withUnsafeBytes { bytes in try deflater.compress(bytes) { stream.append(contentsOf: $0) } }
            try deflater.finish { stream.append(contentsOf: $0) }
            #expect(inflated(stream, size: input.count) == input, "streaming, level \(level)")
            if let whole = profile.makeWholeDeflater() {
                var output = [UInt8](repeating: 0, count: whole.bound(input.count))
                let count = input.withUnsafeBytes { bytes in output.withUnsafeMutableBytes { whole.compress(bytes, into: $0) } }
                #expect(inflated(Array(output[..<count]), size: input.count) == input, "one call, level \(level)")
            }
        }
    }

    private func inflated(_ stream: [UInt8], size: Int) -> [UInt8]? {
        var output = [UInt8](repeating: 0, count: size)
        let inflater = WholeBufferInflater(engine: .zlib)
        let ok = stream.withUnsafeBytes { input in output.withUnsafeMutableBytes { inflater.inflate(input, into: $0) } }
        return ok ? output : nil
    }
}
