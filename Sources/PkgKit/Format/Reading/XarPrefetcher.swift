import Foundation

/// Reads and checks xar entries' data ahead of the reader, on worker threads, and hands it over
/// in TOC order. The heap is random access: each worker reads, inflates and verifies a batch of
/// consecutive entries with its own `XarEntryDecoder` (`XarDeliveringWorker`,
/// `XarVerifyingWorker`), while the reader's thread takes finished data in order. This type is
/// the hand-off between them: the batches, and who waits for whom.
///
/// Memory is bounded whatever the package holds. With `.deliver`, decoded bytes wait in blocks
/// counted against `window`; the batch the reader is on may exceed it by `streamCap` (so the
/// reader can always make progress), and later batches wait for room. With `.verify`, only the
/// first bytes of each file are kept (what executable detection and the plist need), so workers
/// run ahead freely. Entries past the package's size limit are never started.
// Unchecked: owns a lock (`condition`) guarding every `var` and batch field, and block memory handed over under it.
final class XarPrefetcher: @unchecked Sendable {
    // `table`, `work`, `plan` and the bounds are immutable; each worker owns its decoder and
    // scratch memory.

    /// Decoded bytes held for the reader (`.deliver`).
    package static let window = 3 << 20
    /// What the reader's current batch may hold beyond `window`.
    static let streamCap = 2 << 20
    /// A batch ends after this many decoded bytes or entries.
    static let batchBytes: Int64 = 1 << 20
    static let batchEntries = 1024
    /// The first bytes of each file kept in `.verify`.
    package static let headBytes = ExecutableFormat.headBytes
    /// How many entries past the awaited one a worker checks before waking the reader (`.verify`),
    /// unless its batch ends first: a reader woken for each entry catches up at once and waits
    /// again, and on many tiny files the wake-ups cost more than the checks.
    static let wakeAhead = 64

    /// Where the reader is in one entry's data.
    struct Handle {
        fileprivate let batch: XarPrefetchBatch
        fileprivate let slot: Int
        fileprivate var piece = 0
        fileprivate var offset = 0
    }

    /// Work was stopped: the reader has gone.
    struct Cancelled: Error {}

    package let plan: ReadAheadPlan
    package let table: XarEntryTable
    /// Whether each entry has data to decode here.
    package let work: [Bool]
    private let start: Int
    private let endIndex: Int
    private let condition = NSCondition()
    private let pool = XarBlockPool()
    private var batches: [XarPrefetchBatch] = []
    private var nextIndex: Int
    private var cancelled = false
    private var running = 0
    /// Whether the reader is waiting for a worker.
    private var readerWaiting = false
    /// The entry whose check the reader waits for (`.verify`).
    private var awaited: (batch: XarPrefetchBatch, slot: Int)?

    /// Read-ahead over the entries from `start` on that `work` marks, up to the first whose
    /// declared size would take the total past `maxSize` (that one included: the scanner stops
    /// after it). No work starts before `start(workers:makeWorker:)`.
    package init(plan: ReadAheadPlan, table: XarEntryTable, work: [Bool], start: Int, maxSize: Int64) {
        self.plan = plan
        self.table = table
        self.work = work
        nextIndex = start
        self.start = start
        var end = start
        var total: Int64 = 0
        while end < work.count {
            if work[end] {
                let size = max(table.records[end].size, 0)
                if size > maxSize { break }
                total += size
                if total > maxSize {
                    end += 1
                    break
                }
            }
            end += 1
        }
        endIndex = end
    }

    deinit {
        for batch in batches { batch.releaseAll(to: pool) }
    }

    /// Starts `workers` threads, each running the worker `makeWorker` makes on it.
    package func start(workers: Int, makeWorker: @escaping @Sendable (XarPrefetcher) -> any XarPrefetchWorker) {
        condition.lock()
        running += workers
        condition.unlock()
        for _ in 0..<workers {
            Thread.detachNewThread { [self] in
                makeWorker(self).run()
                condition.lock()
                running -= 1
                condition.broadcast()
                condition.unlock()
            }
        }
    }

    /// Whether entry `index`'s data comes from here.
    package func covers(_ index: Int) -> Bool { index >= start && index < endIndex && work[index] }

    /// Stops the workers and waits until they have (so until reads under way have returned).
    package func shutdown() {
        condition.lock()
        cancelled = true
        condition.broadcast()
        while running > 0 { condition.wait() }
        condition.unlock()
    }

    // MARK: - The reader's side

    /// Where entry `index`'s data will be found; the batches before it are given back.
    package func handle(_ index: Int) -> Handle {
        condition.lock()
        defer { condition.unlock() }
        while true {
            while let oldest = batches.first, oldest.end <= index {
                batches.removeFirst().releaseAll(to: pool)
                condition.broadcast()
            }
            if let batch = batches.first, batch.first <= index {
                return Handle(batch: batch, slot: index - batch.first)
            }
            waitAsReader()
        }
    }

    /// Copies the next decoded bytes of the entry (`.deliver`); 0 at its end, after which its
    /// failure, if any, is thrown.
    package func read(_ handle: inout Handle, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        condition.lock()
        var outcome = handle.batch.outcomes[handle.slot]
        while handle.piece >= outcome.pieceCount && !outcome.done {
            waitAsReader()
            outcome = handle.batch.outcomes[handle.slot]
        }
        guard handle.piece < outcome.pieceCount else {
            condition.unlock()
            if let failure = outcome.failure { throw failure }
            return 0
        }
        let batch = handle.batch
        let piece = batch.pieces[outcome.pieceStart + handle.piece]
        // Every block before this piece's has been read to its end.
        if piece.block > batch.released {
            batch.release(below: piece.block, to: pool)
            condition.broadcast()
        }
        let block = batch.blocks[piece.block]!
        condition.unlock()
        let count = min(buffer.count, piece.count - handle.offset)
        buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: block[piece.start + handle.offset..<piece.start + handle.offset + count]))
        handle.offset += count
        if handle.offset == piece.count {
            handle.piece += 1
            handle.offset = 0
        }
        return count
    }

    /// Waits for the entry's check (`.verify`) and copies its kept first bytes into `head`; nil
    /// when fewer were kept than `head` asks for (the caller then reads the entry itself).
    package func verified(_ handle: Handle, head: UnsafeMutableRawBufferPointer) throws -> VerifiedData? {
        condition.lock()
        if !handle.batch.outcomes[handle.slot].done {
            awaited = (handle.batch, handle.slot)
            while !handle.batch.outcomes[handle.slot].done { waitAsReader() }
            awaited = nil
        }
        let outcome = handle.batch.outcomes[handle.slot]
        let pieces = handle.batch.pieces[outcome.pieceStart..<outcome.pieceStart + outcome.pieceCount]
        let blocks = handle.batch.blocks
        condition.unlock()
        if let failure = outcome.failure {
            guard case .checksumMismatch = failure else { throw failure }
        }
        let kept = pieces.reduce(0) { $0 + $1.count }
        guard kept >= Int(min(outcome.size, Int64(head.count))) else { return nil }
        var copied = 0
        for piece in pieces where copied < head.count {
            let count = min(piece.count, head.count - copied)
            UnsafeMutableRawBufferPointer(rebasing: head[copied..<copied + count])
                .copyMemory(from: UnsafeRawBufferPointer(rebasing: blocks[piece.block]![piece.start..<piece.start + count]))
            copied += count
        }
        return VerifiedData(size: outcome.size, headCount: copied, failure: outcome.failure)
    }

    /// Waits for a worker (under the lock). Workers wake the reader only while it waits: a
    /// wake-up for every entry finished would cost more than checking many tiny files.
    private func waitAsReader() {
        readerWaiting = true
        condition.wait()
        readerWaiting = false
    }

    /// Wakes the reader if it waits (under the lock); nothing else waits for a worker.
    private func wakeReader() {
        if readerWaiting { condition.broadcast() }
    }

    // MARK: - The workers' side

    /// The next batch to work on, or nil when there is none (or work was cancelled).
    package func take() -> XarPrefetchBatch? {
        condition.lock()
        defer { condition.unlock() }
        while nextIndex < endIndex && !work[nextIndex] { nextIndex += 1 }
        guard !cancelled, nextIndex < endIndex else { return nil }
        let first = nextIndex
        var bytes: Int64 = 0
        var count = 0
        var end = first
        while end < endIndex && bytes < Self.batchBytes && count < Self.batchEntries {
            if work[end] {
                bytes += max(table.records[end].size, 0)
                count += 1
            }
            end += 1
        }
        nextIndex = end
        let batch = XarPrefetchBatch(first: first, end: end)
        batches.append(batch)
        wakeReader()
        return batch
    }

    /// A worker has done a batch.
    func batchDone() {
        condition.lock()
        wakeReader()
        condition.unlock()
    }

    /// Throws `Cancelled` once the reader has gone: a worker asks between the chunks of a long entry.
    func checkCancelled() throws {
        condition.lock()
        defer { condition.unlock() }
        if cancelled { throw Cancelled() }
    }

    /// A worker starts on entry `index` of `batch`: its pieces start here.
    package func begin(_ index: Int, in batch: XarPrefetchBatch) {
        condition.lock()
        batch.outcomes[index - batch.first].pieceStart = batch.pieces.count
        condition.unlock()
    }

    /// Room for at least `atLeast` bytes in the batch's current block (exactly `exact` when given),
    /// taking a new block (and waiting for room in the window) when the current one is too full.
    package func space(_ batch: XarPrefetchBatch, _ cursor: inout XarPrefetchBatch.Cursor, atLeast: Int, exact: Int?) throws -> UnsafeMutableRawBufferPointer {
        condition.lock()
        defer { condition.unlock() }
        if let current = cursor, let block = batch.blocks[current.block], block.count - current.used >= atLeast {
            let end = exact.map { current.used + $0 } ?? block.count
            return UnsafeMutableRawBufferPointer(rebasing: block[current.used..<end])
        }
        let size = XarBlockPool.size(holding: atLeast)
        // The reader's own batch waits only for the reader; later ones wait for room in the window.
        while !cancelled {
            if batch === batches.first ? batch.retained <= Self.streamCap : pool.retained + size <= Self.window { break }
            // The reader may wait for an entry this worker has finished, and be what frees room.
            wakeReader()
            condition.wait()
        }
        if cancelled { throw Cancelled() }
        let block = pool.take(size)
        cursor = batch.append(block)
        return UnsafeMutableRawBufferPointer(rebasing: block[0..<(exact ?? size)])
    }

    /// Publishes `count` bytes just written at the cursor as entry `index`'s next piece.
    package func commit(_ index: Int, in batch: XarPrefetchBatch, _ cursor: inout XarPrefetchBatch.Cursor, _ count: Int) {
        guard count > 0, let current = cursor else { return }
        let slot = index - batch.first
        condition.lock()
        batch.pieces.append(XarPrefetchBatch.Piece(block: current.block, start: current.used, count: count))
        batch.outcomes[slot].pieceCount += 1
        batch.outcomes[slot].size += Int64(count)
        if plan == .deliver { wakeReader() }
        condition.unlock()
        cursor = (current.block, current.used + count)
    }

    /// Entry `index` is done: it held `size` bytes, and failed with `failure` if not nil.
    package func finish(_ index: Int, in batch: XarPrefetchBatch, size: Int64, failure: ReadError?) {
        let slot = index - batch.first
        condition.lock()
        batch.outcomes[slot].size = size
        batch.outcomes[slot].failure = failure
        batch.outcomes[slot].done = true
        if plan == .deliver || awaited.map({ $0.batch === batch && slot >= $0.slot + Self.wakeAhead }) ?? true { wakeReader() }
        condition.unlock()
    }
}
