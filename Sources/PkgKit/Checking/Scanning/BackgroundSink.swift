import Foundation
import PkgKitFormat
import PkgKitSupport

/// Runs another sink on its own thread, so that reading (inflating, hashing) and writing (creating
/// files, copying into the page cache) use both cores. The bytes handed over are copied into a
/// queue bounded by `maxQueuedBytes`: the reader waits when the writer falls behind.
///
/// A failure of the inner sink is thrown by the next call after it, and by `drain`, which must
/// be called before anything else touches what the inner sink writes.
// Unchecked: owns raw blocks, and an inner sink that the writing thread alone uses until `drain` has waited for it to stop.
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
    static let smallChunk = 64 * 1024

    /// The most bytes waiting for the writer at once.
    package static let maxQueuedBytes = 2 << 20
    /// What one queued operation costs beyond its data (the entry, the queue slot, the block):
    /// counted too, so that 100,000 tiny files cannot queue up a hundred bytes of data each.
    static let operationCost = 512

    private let inner: EntrySink
    /// The most bytes waiting for this writer at once (`maxQueuedBytes` unless told otherwise).
    private let queueLimit: Int
    /// What the reading and the writing thread hand each other.
    private let state = ConditionLockedValue(State())

    private struct State {
        /// Operations waiting for the writer, in order.
        var queue: [Operation] = []
        /// What they cost, data and `operationCost` each.
        var queuedBytes = 0
        /// True once `drain` was called: nothing more is queued.
        var closed = false
        /// True once the writer has run everything and ended.
        var stopped = false
        /// The inner sink's first failure.
        var failure: (any Error)?
        /// Blocks kept for reuse.
        var spareBlocks: [UnsafeMutableRawBufferPointer] = []
    }

    package init(_ inner: EntrySink, maxQueuedBytes: Int = BackgroundSink.maxQueuedBytes) {
        self.inner = inner
        queueLimit = maxQueuedBytes
        Thread.detachNewThread { [self] in run() }
    }

    deinit { state.withLock { $0.spareBlocks.forEach { $0.deallocate() } } }

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
        return state.withLock { $0.spareBlocks.popLast() } ?? .allocate(byteCount: Self.blockSize, alignment: 16)
    }

    /// Gives a block back (under the lock): kept blocks are bounded by the queue's byte limit.
    private static func release(_ block: UnsafeMutableRawBufferPointer, into state: inout State) {
        if block.count == Self.blockSize { state.spareBlocks.append(block) } else { block.deallocate() }
    }

    package func end() throws { try enqueue(.end, bytes: Self.operationCost) }

    /// Waits until every queued operation has run (or the first failure), then rethrows that
    /// failure. Later calls do nothing more.
    package func drain() throws {
        state.withLock(thenWake: .all) { $0.closed = true }
        if let failure = state.withLock(waitingUntil: { $0.stopped }, { $0.failure }) { throw failure }
    }

    private func enqueue(_ operation: Operation, bytes: Int) throws {
        let limit = queueLimit
        // Every change to the queue wakes the writer, which waits only on an empty queue.
        try state.withLock(waitingUntil: { $0.queuedBytes == 0 || $0.queuedBytes + bytes <= limit || $0.failure != nil },
                           thenWake: .all) { state in
            if let failure = state.failure {
                if case .write(let block, _) = operation { Self.release(block, into: &state) }
                throw failure
            }
            precondition(!state.closed, "the sink was drained")
            state.queue.append(operation)
            state.queuedBytes += bytes
        }
    }

    private func run() {
        var failed: Error?
        while true {
            let batch = state.withLock(waitingUntil: { !$0.queue.isEmpty || $0.closed }, thenWake: .all) { state in
                if state.queue.isEmpty { state.stopped = true }
                defer { state.queue.removeAll(keepingCapacity: true) }
                return state.queue
            }
            if batch.isEmpty { return }
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
            state.withLock(thenWake: .all) { state in
                used.forEach { Self.release($0, into: &state) }
                state.queuedBytes -= freed
                if state.failure == nil { state.failure = failed }
            }
        }
    }
}
