import Foundation
import Testing
import TestSupport
@testable import PkgKit
@testable import PkgKitFormat

/// What a `create` level does to a file: every engine writes a zlib stream that reads back, the
/// same bytes every time; from level 4 on a large file is never larger than bsdtar's (zlib's
/// level 6), and a higher level never larger than a lower; whatever a level compresses in one
/// call, a reader inflates in one call; and where the fast libraries are missing, zlib streams
/// every file. "Never larger" allows a thousandth: zlib's higher levels can end a stream a byte
/// or two longer than its level 6 on text with little to find.
@Suite struct DeflateProfileTests {
    /// Text that compresses as prose does, larger than any file compressed in one call.
    private static let largeText = [UInt8](compressibleText(Int(DeflateProfile.wholeBufferLimit) + 300_000, seed: 7))
    /// Text a level may compress in one call.
    private static let smallText = [UInt8](compressibleText(200_000, seed: 11))

    @Test func theDefaultIsLevelFive() {
        #expect(WriteOptions.defaultLevel == 5)
        #expect(WriteOptions().level == 5)
        #expect(DeflateProfile.defaultLevel == 5)
    }

    /// bsdtar writes zlib's level 6: from level 4 on, a package's large files are never larger.
    @Test func fromLevelFourALargeFileIsNoLargerThanBsdtarsZlibSix() throws {
        let bsdtar = try streamed(Self.largeText, through: Deflater(level: 6))
        for level: Int32 in 4 ... 9 {
            let profile = DeflateProfile(level: level)
            let size = try compressed(Self.largeText, by: profile).count
            #expect(size <= bsdtar.count + bsdtar.count / 1000, "level \(level): \(size) bytes against zlib 6's \(bsdtar.count)")
        }
    }

    @Test func aHigherLevelNeverMakesAFileLarger() throws {
        for text in [Self.smallText, Self.largeText] {
            var previous = Int.max / 2
            for level: Int32 in 4 ... 9 {
                let size = try compressed(text, by: DeflateProfile(level: level)).count
                #expect(size <= previous + previous / 1000, "level \(level) of a \(text.count)-byte file: \(size) bytes, level \(level - 1): \(previous)")
                previous = size
            }
        }
    }

    /// What every level writes is a zlib stream that inflates back to the input, one call or
    /// streamed, with or without the fast libraries.
    @Test func everyLevelRoundTripsWithEveryEngine() throws {
        for level: Int32 in 1 ... 9 {
            for (libdeflate, isal) in [(true, true), (true, false), (false, false)] {
                let profile = DeflateProfile(level: level, libdeflate: libdeflate && WholeBufferDeflater.isAvailable,
                                             isal: isal && FastDeflater.isAvailable)
                for text in [Self.smallText, Self.largeText] {
                    let stream = try compressed(text, by: profile)
                    #expect(inflated(stream, size: text.count) == text, "level \(level), \(text.count) bytes, libdeflate \(libdeflate), ISA-L \(isal)")
                }
            }
        }
    }

    /// A package is reproducible: the same file at the same level is the same bytes.
    @Test func theSameFileAtTheSameLevelIsTheSameBytes() throws {
        for level: Int32 in 1 ... 9 {
            let profile = DeflateProfile(level: level)
            for text in [Self.smallText, Self.largeText] {
                #expect(try compressed(text, by: profile) == compressed(text, by: profile), "level \(level)")
            }
        }
    }

    /// What a writer compresses whole, a reader inflates whole, into buffers of the same size.
    @Test func whatALevelCompressesInOneCallAReaderInflatesInOneCall() {
        for level: Int32 in 1 ... 9 {
            let profile = DeflateProfile(level: level, libdeflate: true, isal: true)
            #expect(profile.wholeLimit <= XarEntryDecoder.wholeLimit)
            #expect(profile.wholeLimit <= Int64(FileEncoder.wholeLimit))
            #expect(profile.engine(forSize: profile.wholeLimit + 1) == profile.streaming)
        }
        #expect(Int64(ChunkParameters.largestChunk) == DeflateProfile.wholeBufferLimit)
    }

    @Test func withoutTheFastLibrariesZlibStreamsEveryFile() {
        for level: Int32 in 1 ... 9 {
            let profile = DeflateProfile(level: level, libdeflate: false, isal: false)
            #expect(profile.makeWholeDeflater() == nil, "level \(level)")
            #expect(profile.makeStreamDeflater() is Deflater, "level \(level)")
            #expect(profile.engine(forSize: 1) == profile.streaming)
        }
    }

    @Test func levelsOutsideOneToNineActAsTheNearest() {
        #expect(DeflateProfile(level: 0, libdeflate: true, isal: true) == DeflateProfile(level: 1, libdeflate: true, isal: true))
        #expect(DeflateProfile(level: 12, libdeflate: true, isal: true) == DeflateProfile(level: 9, libdeflate: true, isal: true))
    }

    /// `input` as `create` compresses a file of its size at `profile`: in one call when the
    /// profile gives it to its one-call engine, else streamed.
    private func compressed(_ input: [UInt8], by profile: DeflateProfile) throws -> [UInt8] {
        if case .libdeflate = profile.engine(forSize: Int64(input.count)), let whole = profile.makeWholeDeflater() {
            var output = [UInt8](repeating: 0, count: whole.bound(input.count))
            let count = input.withUnsafeBytes { bytes in output.withUnsafeMutableBytes { whole.compress(bytes, into: $0) } }
            return Array(output[..<count])
        }
        return try streamed(input, through: profile.makeStreamDeflater())
    }

    private func streamed(_ input: [UInt8], through deflater: some StreamDeflater) throws -> [UInt8] {
        var stream: [UInt8] = []
        try input.withUnsafeBytes { bytes in try deflater.compress(bytes) { stream.append(contentsOf: $0) } }
        try deflater.finish { stream.append(contentsOf: $0) }
        return stream
    }

    private func inflated(_ stream: [UInt8], size: Int) -> [UInt8]? {
        var output = [UInt8](repeating: 0, count: size)
        let inflater = WholeBufferInflater(engine: .zlib)
        let ok = stream.withUnsafeBytes { input in output.withUnsafeMutableBytes { inflater.inflate(input, into: $0) } }
        return ok ? output : nil
    }
}
