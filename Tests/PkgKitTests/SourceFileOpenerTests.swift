import Foundation
@testable import PkgKitFormat
import Testing
import TestSupport

/// `create` opens each source file through its folder's descriptor: the same files as `open` by
/// full path, the same refusals.
struct SourceFileOpenerTests {
    /// The bytes of the file `descriptor` reads, closing it.
    func contents(_ descriptor: Int32) -> String {
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: 64)
        let count = read(descriptor, &bytes, bytes.count)
        return String(decoding: bytes[..<max(count, 0)], as: UTF8.self)
    }

    @Test func filesOfOneFolderAfterAnotherAreTheFilesTheirPathsName() throws {
        let scratch = try Scratch()
        for (path, text) in [("a/one.txt", "one"), ("a/two.txt", "two"), ("b/c/three.txt", "three"), ("a/four.txt", "four")] {
            _ = try scratch.write(path, text)
        }
        let opener = SourceFileOpener()
        for (path, text) in [("a/one.txt", "one"), ("a/two.txt", "two"), ("b/c/three.txt", "three"), ("a/four.txt", "four")] {
            let descriptor = opener.open(Array(scratch.path(path).utf8))
            try #require(descriptor >= 0, "\(path): errno \(errno)")
            #expect(contents(descriptor) == text)
        }
    }

    @Test func aLinkInTheFileNameIsRefusedAndALinkedFolderFollowedAsOpenDoes() throws {
        let scratch = try Scratch()
        _ = try scratch.write("real/file.txt", "data")
        try FileManager.default.createSymbolicLink(atPath: scratch.path("real/link.txt"), withDestinationPath: "file.txt")
        try FileManager.default.createSymbolicLink(atPath: scratch.path("folder"), withDestinationPath: "real")
        let opener = SourceFileOpener()
        #expect(opener.open(Array(scratch.path("real/link.txt").utf8)) == -1 && errno == ELOOP)
        let followed = opener.open(Array(scratch.path("folder/file.txt").utf8))
        try #require(followed >= 0)
        #expect(contents(followed) == "data")
        #expect(opener.open(Array(scratch.path("missing/file.txt").utf8)) == -1 && errno == ENOENT)
        #expect(opener.open(Array(scratch.path("real/missing.txt").utf8)) == -1 && errno == ENOENT)
    }
}
