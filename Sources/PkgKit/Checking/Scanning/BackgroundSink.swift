import Foundation
import PkgKitFormat

/// Runs another sink on its own thread, so that reading (inflating, hashing) and writing (creating
/// files, copying into the page cache) use both cores. The bytes handed over are copied into a
/// queue bounded by `maxQueuedBytes`: the reader waits when the writer falls behind.
///
/// A failure of the inner sink is thrown by the next call after it, and by `drain`, which must
/// be called before anything else touches what the inner sink writes.
// Unchecked: the queue, counters and failure are touched only under `condition`; the inner sink
// is used by the writing thread alone until `drain` has waited for it to stop.
package final class BackgroundSink: EntrySink, @unchecked Sendable {
    private enum Operation {
        case begin(ArchiveEntry)
        /// A copy of `count` bytes in `block`.
        case write(UnsafeMutableRawBufferPointer, count: Int)
        case end
    }

    /// Large chunks are copied into blocks of this size, kept for reuse: allocating each afresh
    /// costs a mapping and a page fault per 4 KiB, on every byte a package holds.
    package static let blockSize = 1 << 20
    /// Chunks above this size use a kept block; smaller ones come from the heap.
    package static let smallChunk = 64 * 1024

    /// The most bytes waiting for the writer at once.
    package static let maxQueuedBytes = 2 << 20
    /// What one queued operation costs beyond its data (the entry, the queue slot, the block):
    /// counted too, so that 100,000 tiny files cannot queue up a hundred bytes of data each.
    package static let operationCost = 512

    private let inner: EntrySink
    /// The most bytes waiting for this writer at once (`maxQueuedBytes` unless told otherwise).
    private let queueLimit: Int
    private let condition = NSCondition()
    private var queue: [Operation] = []
    private var queuedBytes = 0
    private var closed = false
    private var stopped = false
    private var failure: Error?
    private var spareBlocks: [UnsafeMutableRawBufferPointer] = []

    package init(_ inner: EntrySink, maxQueuedBytes: Int = BackgroundSink.maxQueuedBytes) {
        self.inner = inner
        queueLimit = maxQueuedBytes
        Thread.detachNewThread { [self] in run() }
    }

    deinit { spareBlocks.forEach { $0.deallocate() } }

    package func begin(_ entry: ArchiveEntry) throws { try enqueue(.begin(entry), bytes: Self.operationCost) }

    package func write(_ chunk: UnsafeRawBufferPointer) throws {
        guard !chunk.isEmpty else { return }
        let block = takeBlock(for: chunk.count)
        block.copyMemory(from: chunk)
        try enqueue(.write(block, count: chunk.count), bytes: chunk.count + Self.operationCost)
    }

    private func takeBlock(for count: Int) -> UnsafeMutableRawBufferPointer {
        guard count > Self.smallChunk, count <= Self.blockSize else {
            return .allocate(byteCount: count, alignment: 16)
        }
        condition.lock()
        defer { condition.unlock() }
        return spareBlocks.popLast() ?? .allocate(byteCount: Self.blockSize, alignment: 16)
    }

    /// Gives a block back (under the lock): kept blocks are bounded by the queue's byte limit.
    private func release(_ block: UnsafeMutableRawBufferPointer) {
        if block.count == Self.blockSize { spareBlocks.append(block) } else { block.deallocate() }
    }

    package func end() throws { try enqueue(.end, bytes: Self.operationCost) }

    /// Waits until every queued operation has run (or the first failure), then rethrows that
    /// failure. Later calls do nothing more.
    package func drain() throws {
        condition.lock()
        closed = true
        condition.broadcast()
        while !stopped { condition.wait() }
        let failure = failure
        condition.unlock()
        if let failure { throw failure }
    }

    private func enqueue(_ operation: Operation, bytes: Int) throws {
        condition.lock()
        defer { condition.unlock() }
        while queuedBytes > 0 && queuedBytes + bytes > queueLimit && failure == nil { condition.wait() }
        if let failure {
            if case .write(let block, _) = operation { release(block) }
            throw failure
        }
        precondition(!closed, "the sink was drained")
        queue.append(operation)
        queuedBytes += bytes
        if queue.count == 1 { condition.broadcast() }
    }

    private func run() {
        var failed: Error?
        while true {
            condition.lock()
            while queue.isEmpty && !closed { condition.wait() }
            if queue.isEmpty {
                stopped = true
                condition.broadcast()
                condition.unlock()
                return
            }
            let batch = queue
            queue.removeAll(keepingCapacity: true)
            condition.unlock()
            var freed = 0
            var used: [UnsafeMutableRawBufferPointer] = []
            for operation in batch {
                do {
                    // After a failure nothing more is written; buffers are still freed.
                    if failed == nil {
                        switch operation {
                        case .begin(let entry): try inner.begin(entry)
                        case .write(let block, let count): try inner.write(UnsafeRawBufferPointer(rebasing: block[0..<count]))
                        case .end: try inner.end()
                        }
                    }
                } catch {
                    failed = error
                }
                freed += Self.operationCost
                if case .write(let block, let count) = operation {
                    freed += count
                    used.append(block)
                }
            }
            condition.lock()
            used.forEach(release)
            queuedBytes -= freed
            if failure == nil { failure = failed }
            condition.broadcast()
            condition.unlock()
        }
    }
}
