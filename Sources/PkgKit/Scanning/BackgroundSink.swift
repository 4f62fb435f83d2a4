import Foundation

/// Runs another sink on its own thread, so that reading (inflating, hashing) and writing (creating
/// files, copying into the page cache) use both cores. The bytes handed over are copied into a
/// queue bounded by `maxQueuedBytes`: the reader waits when the writer falls behind.
///
/// A failure of the inner sink is thrown by the next call after it, and by `drain`, which must
/// be called before anything else touches what the inner sink writes.
final class BackgroundSink: EntrySink, @unchecked Sendable {
    private enum Operation {
        case begin(ArchiveEntry)
        case write(UnsafeMutableRawBufferPointer)
        case end
    }

    /// The most bytes waiting for the writer at once.
    static let maxQueuedBytes = 4 << 20
    /// What one queued operation costs beyond its data (the entry, the queue slot, the block):
    /// counted too, so that 100,000 tiny files cannot queue up a hundred bytes of data each.
    static let operationCost = 512

    private let inner: EntrySink
    private let condition = NSCondition()
    private var queue: [Operation] = []
    private var queuedBytes = 0
    private var closed = false
    private var stopped = false
    private var failure: Error?

    init(_ inner: EntrySink) {
        self.inner = inner
        Thread.detachNewThread { [self] in run() }
    }

    func begin(_ entry: ArchiveEntry) throws { try enqueue(.begin(entry), bytes: Self.operationCost) }

    func write(_ chunk: UnsafeRawBufferPointer) throws {
        guard !chunk.isEmpty else { return }
        let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk.count, alignment: 16)
        copy.copyMemory(from: chunk)
        try enqueue(.write(copy), bytes: chunk.count + Self.operationCost)
    }

    func end() throws { try enqueue(.end, bytes: Self.operationCost) }

    /// Waits until every queued operation has run (or the first failure), then rethrows that
    /// failure. Later calls do nothing more.
    func drain() throws {
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
        while queuedBytes > 0 && queuedBytes + bytes > Self.maxQueuedBytes && failure == nil { condition.wait() }
        if let failure {
            if case .write(let buffer) = operation { buffer.deallocate() }
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
            for operation in batch {
                do {
                    // After a failure nothing more is written; buffers are still freed.
                    if failed == nil {
                        switch operation {
                        case .begin(let entry): try inner.begin(entry)
                        case .write(let buffer): try inner.write(UnsafeRawBufferPointer(buffer))
                        case .end: try inner.end()
                        }
                    }
                } catch {
                    failed = error
                }
                freed += Self.operationCost
                if case .write(let buffer) = operation {
                    freed += buffer.count
                    buffer.deallocate()
                }
            }
            condition.lock()
            queuedBytes -= freed
            if failure == nil { failure = failed }
            condition.broadcast()
            condition.unlock()
        }
    }
}
