import Foundation
import Testing
import TestSupport

/// `create`'s default makes packages no larger than `bsdtar --format xar` (zlib level 6) of the
/// same files, including data on which the earlier default (ISA-L level 2) made packages three
/// times bsdtar's size: 1 KiB blocks each repeated four times; and text in records, which
/// libdeflate's greedy level 4 makes 15 % larger than zlib's level 6 does.
@Suite(.offThePool) struct PackageSizeTests {
    /// Text in lines, like a catalog or a CSV.
    static func records(_ count: Int, seed: Int) -> String {
        var text = ""
        for index in 0 ..< count { text += "record \(index), value \((index &* 7919 &+ seed) % 1000), name item-\(index % 97)\n" }
        return text
    }

    /// `blocks` random 1 KiB blocks, each written four times in a row.
    static func repeatedBlocks(_ blocks: Int) -> Data {
        var data = Data()
        for index in 0 ..< blocks {
            let block = pseudoRandomData(1024, seed: UInt64(index) &+ 1)
            for _ in 0 ..< 4 { data.append(block) }
        }
        return data
    }

    @Test func theDefaultIsNoLargerThanBsdtarsPackage() throws {
        let scratch = try Scratch()
        try scratch.write("src/ContentInfo.plist", plist(id: "com.example.size", version: "1.0"))
        try scratch.write("src/Contents/data/records.csv", Self.records(30_000, seed: 1))
        try scratch.write("src/Contents/data/blocks.bin", Self.repeatedBlocks(512))
        for index in 0 ..< 40 {
            try scratch.write("src/Contents/small/\(index).txt", Self.records(40 + index * 13, seed: index))
        }
        #expect(try CommandRunner.pkgtool(["create", scratch.path("src"), "-o", scratch.path("p.pkg")]).status == 0)
        #expect(try bsdtar(["--format", "xar", "-cf", scratch.path("b.xar"), "-C", scratch.path("src"), "ContentInfo.plist", "Contents"]) == 0)
        let ours = try #require(try FileManager.default.attributesOfItem(atPath: scratch.path("p.pkg"))[.size] as? Int)
        let theirs = try #require(try FileManager.default.attributesOfItem(atPath: scratch.path("b.xar"))[.size] as? Int)
        #expect(ours <= theirs, "pkgtool \(ours) bytes, bsdtar \(theirs)")
        try CommandRunner.shell("mkdir x && bsdtar -xf p.pkg -C x && diff -r x src", in: scratch.url)
    }
}
