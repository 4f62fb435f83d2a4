import Crypto
import Foundation
import PkgKitSupport

/// What makes two files' data the same for `HeapCoalescing`: their sha256 and size. Not sha1,
/// the xar checksum: two different files with one sha1 can be made on purpose, and a package
/// must never give one file another's bytes.
struct ContentKey: Hashable, Sendable {
    /// The sha256's 32 bytes as four words: swift-crypto 3 does not declare its digest Sendable.
    private let sha256: SIMD4<UInt64>
    /// The file's size.
    package let size: Int64

    /// The key of a file of `size` bytes whose sha256 is `sha256`.
    package init(sha256: SHA256Digest, size: Int64) {
        self.sha256 = sha256.withUnsafeBytes { $0.loadUnaligned(as: SIMD4<UInt64>.self) }
        self.size = size
    }
}

/// Identical files stored once: a file whose bytes equal an earlier file's gets a TOC entry
/// pointing at that file's bytes in the heap, as Apple's `xar --coalesce-heap` writes it. Both
/// Apple's xar and libarchive read such a package from a file (libarchive then seeks back, so
/// not from a pipe), and each distinct file's bytes travel once.
///
/// Only files of at least `smallestCandidate` bytes whose size another file shares are looked
/// at, so only they are hashed with sha256. The workers encode in any order: the first to hash a content claims it, and a later
/// file (by package order) of the same content skips compression. Which copy is stored is
/// decided in package order when the heap is laid out (`storedCopy`, `recordStored`), so the
/// bytes never depend on timing.
final class HeapCoalescing: Sendable {
    /// Where the first copy of a content lies in the heap.
    struct StoredCopy: Sendable {
        package var heapOffset: Int64
        package var length: Int64
        var archivedSHA1: Insecure.SHA1Digest
        package var encoding: DataEncoding
        /// Its chunk table's index in `chunkTables`, or -1.
        fileprivate var chunks: Int32
    }

    private struct Slot: Sendable {
        /// The lowest item index seen so far with this content.
        var first: Int32
        /// Its `StoredCopy`'s index once stored, else -1.
        var stored: Int32 = -1
    }

    /// Smaller files are always stored: one compresses to a few hundred bytes, while its place
    /// in the tables costs about 100 bytes of memory, and 100,000 of them would take `create`
    /// past its memory bound. On `/usr/share`, files of 4 KiB and more are 2,355 of the 36,728
    /// files that share a size and hold 96% of what coalescing saves.
    static let smallestCandidate: Int64 = 4096

    private let candidateSizes: Set<Int64>
    /// What the workers claim, each content by its key.
    private let slots = LockedValue<[ContentKey: Slot]>([:])
    /// The first copies stored, and their chunk tables: only the one thread that lays out the
    /// heap touches them, so their lock is never waited for.
    private let stored = LockedValue((copies: [StoredCopy](), chunkTables: [ChunkTable]()))

    /// Coalescing for `items`: files of a size no other file has are never looked at again.
    package init(_ items: [SourceItem]) {
        var seen = Set<Int64>()
        var shared = Set<Int64>()
        var candidates = 0
        for item in items where item.kind == .file && item.size >= Self.smallestCandidate {
            if !seen.insert(item.size).inserted { shared.insert(item.size) }
        }
        for item in items where item.kind == .file && shared.contains(item.size) { candidates += 1 }
        candidateSizes = shared
        slots.withLock { $0.reserveCapacity(candidates) }
        stored.withLock { $0.copies.reserveCapacity(candidates) }
    }

    /// Whether a file of `size` bytes may have a twin.
    func isCandidate(size: Int64) -> Bool { candidateSizes.contains(size) }

    /// Records that item `index` has `key`; returns true when an earlier item has it too, so
    /// that this one need not be encoded.
    func isDuplicate(_ key: ContentKey, index: Int) -> Bool {
        slots.withLock { slots in
            if let slot = slots[key], slot.first < index { return true }
            slots[key, default: Slot(first: Int32(index))].first = Int32(index)
            return false
        }
    }

    /// Where the bytes of `key` already are in the heap, and their chunk table; nil for the
    /// first copy.
    func storedCopy(_ key: ContentKey) -> (copy: StoredCopy, chunks: ChunkTable?)? {
        let index = slots.withLock { $0[key]?.stored ?? -1 }
        guard index >= 0 else { return nil }
        return stored.withLock { stored in
            let copy = stored.copies[Int(index)]
            return (copy, copy.chunks >= 0 ? stored.chunkTables[Int(copy.chunks)] : nil)
        }
    }

    /// Records the first copy of `key`, just placed in the heap.
    func recordStored(_ key: ContentKey, heapOffset: Int64, file: EncodedFile) {
        let index = stored.withLock { stored in
            var chunks: Int32 = -1
            if let table = file.chunks {
                chunks = Int32(stored.chunkTables.count)
                stored.chunkTables.append(table)
            }
            stored.copies.append(StoredCopy(heapOffset: heapOffset, length: file.length, archivedSHA1: file.archivedSHA1,
                                            encoding: file.encoding, chunks: chunks))
            return Int32(stored.copies.count - 1)
        }
        slots.withLock { $0[key, default: Slot(first: Int32.max)].stored = index }
    }
}
