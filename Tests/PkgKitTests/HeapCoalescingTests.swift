import Crypto
import Foundation
import Testing
@testable import PkgKit
@testable import PkgKitFormat

/// Which files `HeapCoalescing` lets share bytes: only those of a size another file has, and
/// always the earliest in package order, whichever thread hashed first.
@Suite struct HeapCoalescingTests {
    func item(_ name: String, size: Int64) -> SourceItem {
        SourceItem(path: ArchivePath(raw: Array("Contents/\(name)".utf8)), kind: .file, mode: 0o644, size: size, origin: .data([]))
    }

    func key(_ text: String) -> ContentKey { ContentKey(sha256: SHA256.hash(data: Data(text.utf8)), size: Int64(text.utf8.count)) }

    @Test func onlyFilesOfASharedSizeFrom4KiBAreCandidates() {
        let coalescing = HeapCoalescing([item("a", size: 5000), item("b", size: 5000), item("c", size: 5001),
                                         item("s1", size: 4095), item("s2", size: 4095), item("e1", size: 0), item("e2", size: 0)])
        #expect(coalescing.isCandidate(size: 5000))
        #expect(!coalescing.isCandidate(size: 5001))
        #expect(!coalescing.isCandidate(size: 4095))
        #expect(!coalescing.isCandidate(size: 0))
    }

    @Test func theEarliestItemKeepsItsBytes() {
        let coalescing = HeapCoalescing([item("a", size: 10), item("b", size: 10)])
        let same = key("0123456789")
        #expect(!coalescing.isDuplicate(same, index: 5))
        #expect(!coalescing.isDuplicate(same, index: 2))
        #expect(coalescing.isDuplicate(same, index: 3))
        #expect(coalescing.isDuplicate(same, index: 5))
        #expect(!coalescing.isDuplicate(key("9876543210"), index: 4))
    }

    /// A later copy finds where the first one was stored, chunk table and all.
    @Test func aStoredCopyIsFoundByLaterCopies() {
        let coalescing = HeapCoalescing([item("a", size: 10), item("b", size: 10)])
        let same = key("0123456789")
        #expect(!coalescing.isDuplicate(same, index: 0))
        #expect(coalescing.storedCopy(same) == nil)
        let digest = Insecure.SHA1.hash(data: Data("compressed".utf8))
        let file = EncodedFile(size: 10, length: 7, encoding: .zlib, extractedSHA1: digest, archivedSHA1: digest, bytes: .empty)
        coalescing.recordStored(same, heapOffset: 120, file: file)
        let found = coalescing.storedCopy(same)
        #expect(found?.copy.heapOffset == 120 && found?.copy.length == 7 && found?.copy.encoding == .zlib && found?.chunks == nil)
        #expect(coalescing.storedCopy(key("9876543210")) == nil)
    }
}
