import Crypto
import Foundation
@testable import PkgKit
import Testing

/// The 20-byte form every file's sha1 is kept in: it must give back exactly the hex it was given
/// (what JSON output, the stat cache and delta matching read), and take nothing that is not a sha1.
@Suite struct SHA1ValueTests {
    @Test func aDigestReadsBackAsTheSameHex() throws {
        for text in ["", "a", "pkgtool", String(repeating: "x", count: 10_000)] {
            let digest = Insecure.SHA1.hash(data: Data(text.utf8))
            let value = try #require(SHA1Value(bytes: digest))
            #expect(value.hexString == digest.hexString)
            #expect(SHA1Value(hex: digest.hexString) == value)
            #expect(SHA1Value(hex: digest.hexString.uppercased()) == value, "xar writers may spell digests in capitals")
            #expect(SHA1Value(digest) == value)
        }
    }

    /// The stat cache spells digests into its bytes and reads them back from its bytes, never
    /// through a String: both ways must agree with the hex a String gives.
    @Test func digestsGoIntoBytesAndComeBackFromThem() throws {
        for seed in 0..<64 {
            let value = SHA1Value(Insecure.SHA1.hash(data: pseudoRandomBytes(seed)))
            var line: [UInt8] = Array("path\t".utf8)
            value.appendHex(to: &line)
            #expect(String(decoding: line, as: UTF8.self) == "path\t" + value.hexString)
            #expect(SHA1Value(hexBytes: line.dropFirst(5)) == value)
            #expect(SHA1Value(hexBytes: line.dropFirst(4)) == nil, "41 bytes are not a digest")
        }
    }

    private func pseudoRandomBytes(_ seed: Int) -> Data {
        Data((0..<(seed * 7 + 1)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ seed) })
    }

    @Test(arguments: ["", String(repeating: "a", count: 39), String(repeating: "a", count: 41), String(repeating: "g", count: 40),
                      "da39a3ee5e6b4b0d3255bfef95601890afd8070 "])
    func whatIsNotASHA1IsRefused(_ text: String) {
        #expect(SHA1Value(hex: text) == nil)
        #expect(SHA1Value(hexBytes: Array(text.utf8)) == nil)
    }

    @Test func onlyTwentyBytesMakeADigest() {
        #expect(SHA1Value(bytes: [UInt8](repeating: 1, count: 19)) == nil)
        #expect(SHA1Value(bytes: [UInt8](repeating: 1, count: 21)) == nil)
        #expect(SHA1Value(bytes: [UInt8](repeating: 1, count: 20))?.hexString == String(repeating: "01", count: 20))
    }

    /// Facts keep the digest compactly and still hand out the hex, and drop what is not a sha1.
    @Test func factsHandOutTheHexTheyWereGiven() {
        var fact = EntryFacts(path: ArchivePath("Contents/a.txt"), pathProblem: nil, kind: .file, mode: 0o644, size: 1)
        fact.sha1 = "DA39A3EE5E6B4B0D3255BFEF95601890AFD80709"
        #expect(fact.sha1 == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
        fact.sha1 = nil
        #expect(fact.sha1 == nil)
    }
}
