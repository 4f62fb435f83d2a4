import Crypto
import Foundation
import Testing
import TestSupport
@testable import PkgKit

/// An installed version is read on every core, a folder at a time: every file must still get its
/// own sha1 and identity, whatever thread read it, and nothing outside the folder is followed.
@Suite struct InstalledTreeTests {
    @Test func everyFileGetsItsOwnDigestWhateverTheThreads() throws {
        let s = try Scratch()
        let version = "Documents/com.example.tree/1.0"
        var expected: [String: String] = [:]
        for folder in ["a", "b/c", "d"] {
            for index in 0..<250 {
                // Empty, small and multi-buffer files, each with bytes of its own.
                let size = index % 50 == 0 ? (1 << 20) * 3 / 2 + index : (index % 7 == 0 ? 0 : 37 * index)
                var bytes = [UInt8](repeating: UInt8(index % 251), count: size)
                for position in stride(from: 0, to: size, by: 4096) { bytes[position] = UInt8(truncatingIfNeeded: position / 4096 + index) }
                let relative = "Contents/\(folder)/file\(index).bin"
                _ = try s.write(version + "/" + relative, bytes)
                expected[relative] = Insecure.SHA1.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
            }
        }
        _ = try s.write("outside/secret.bin", Array("not part of the version".utf8))
        try FileManager.default.createSymbolicLink(atPath: s.path(version + "/Contents/d/escape"), withDestinationPath: s.path("outside"))
        let product = try #require(try ProductFolder.open(documents: s.documents, identifier: "com.example.tree", create: false))
        let tree = try InstalledTree.scan(product, version: "1.0")

        #expect(tree.files.count == expected.count)
        for file in tree.files {
            #expect(expected[file.relativePath] == file.sha1.hexString, "\(file.relativePath)")
            var info = stat()
            #expect(stat(s.path(version + "/" + file.relativePath), &info) == 0)
            #expect(file.identity == FileIdentity(info), "\(file.relativePath)")
        }
        #expect(tree.digests["Contents/d/escape"] == "link:" + s.path("outside"))
        #expect(!tree.digests.keys.contains { $0.contains("secret") })
    }

    @Test func onlyTheSizesAskedForAreRead() throws {
        let s = try Scratch()
        let version = "Documents/com.example.tree/1.0"
        _ = try s.write(version + "/Contents/keep.bin", [UInt8](repeating: 1, count: 100))
        _ = try s.write(version + "/Contents/skip.bin", [UInt8](repeating: 2, count: 200))
        let product = try #require(try ProductFolder.open(documents: s.documents, identifier: "com.example.tree", create: false))
        let tree = try InstalledTree.scan(product, version: "1.0") { $0 == 100 }
        #expect(tree.files.map(\.relativePath) == ["Contents/keep.bin"])
        #expect(tree.digests.keys.sorted() == ["Contents/keep.bin"])
    }
}
