import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads and checks xar entries' data ahead of the reader, on worker threads, and hands it over
/// in TOC order. The heap is random access: each worker `pread`s, inflates and verifies a batch of
/// consecutive entries with its own `XarEntryDecoder`, while the reader's thread takes finished
/// data in order.
///
/// Memory is bounded whatever the package holds. With `.deliver`, decoded bytes wait in blocks
/// counted against `window`; the batch the reader is on may exceed it by `streamCap` (so the
/// reader can always make progress), and later batches wait for room. With `.verify`, only the
/// first bytes of each file are kept (what executable detection and the plist need), so workers
/// run ahead freely. Entries past the package's size limit are never started.
final class XarPrefetcher: @unchecked Sendable {
    // @unchecked Sendable: every `var` below (and every `Batch`'s fields) is read and written only
    // with `condition` locked; `table`, `work`, `keep` are immutable; each worker thread owns its
    // decoder and scratch buffers, and block memory is handed over under the lock.

    /// Decoded bytes held for the reader (`.deliver`).
    static let window = 3 << 20
    /// What the reader's current batch may hold beyond `window`.
    static let streamCap = 2 << 20
    /// Blocks decoded bytes are written into; an entry decoded in one call gets one of its own size.
    static let blockSize = 1 << 20
    /// Freed blocks kept for reuse: a fresh mapping costs a page fault per 4 KiB.
    static let maxPooled = 2 << 20
    /// A batch ends after this many decoded bytes or entries.
    static let batchBytes: Int64 = 1 << 20
    static let batchEntries = 1024
    /// The first bytes of each file kept in `.verify`.
    static let headBytes = ExecutableFormat.headBytes

    fileprivate struct Piece {
        var block: Int
        var start: Int
        var count: Int
    }

    fileprivate struct Outcome {
        var pieceStart = 0
        var pieceCount = 0
        /// Bytes the data held (in `.deliver`, also the bytes in its pieces).
        var size: Int64 = 0
        var done = false
        var failure: ReadError?
    }

    fileprivate final class Batch {
        let first: Int
        let end: Int
        var blocks: [UnsafeMutableRawBufferPointer?] = []
        var pieces: [Piece] = []
        var outcomes: [Outcome]
        /// Bytes of blocks not yet given back.
        var retained = 0
        /// Blocks below this index have been given back.
        var released = 0

        init(first: Int, end: Int) {
            self.first = first
            self.end = end
            outcomes = Array(repeating: Outcome(), count: end - first)
        }
    }

    /// Where the reader is in one entry's data.
    struct Handle {
        fileprivate let batch: Batch
        fileprivate let slot: Int
        fileprivate var piece = 0
        fileprivate var offset = 0
    }

    private struct Cancelled: Error {}

    let plan: ReadAheadPlan
    private let table: XarEntryTable
    private let work: [Bool]
    /// Bytes kept per entry in `.verify`.
    private let keepLimit: (Int) -> Int
    private let condition = NSCondition()
    private var batches: [Batch] = []
    private var nextIndex: Int
    private let start: Int
    private let endIndex: Int
    private var retained = 0
    private var pool: [Int: [UnsafeMutableRawBufferPointer]] = [:]
    private var pooled = 0
    private var cancelled = false
    private var running = 0
    /// Whether the reader is waiting for a worker.
    private var readerWaiting = false
    /// The entry whose check the reader waits for (`.verify`).
    private var awaited: (batch: Batch, slot: Int)?
    /// How many entries past the awaited one a worker checks before waking the reader (`.verify`),
    /// unless its batch ends first: woken for each entry, the reader caught up at once and
    /// waited again, and on 100,000 tiny files the wake-ups cost more than the checks.
    static let wakeAhead = 64

    /// Starts `workers` threads on the entries from `start` on that `work` marks, up to the first
    /// whose declared size would take the total past `maxSize` (that one included: the scanner
    /// stops after it). `makeDecoder` is called once on each worker thread.
    init(plan: ReadAheadPlan, table: XarEntryTable, work: [Bool], start: Int, maxSize: Int64, workers: Int,
         keepLimit: @escaping @Sendable (Int) -> Int, makeDecoder: @escaping @Sendable () -> XarEntryDecoder) {
        self.plan = plan
        self.table = table
        self.work = work
        self.keepLimit = keepLimit
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
        running = workers
        for _ in 0..<workers {
            Thread.detachNewThread { [self] in
                let decoder = makeDecoder()
                run(decoder)
            }
        }
    }

    deinit {
        for batch in batches { batch.blocks.forEach { $0?.deallocate() } }
        for blocks in pool.values { blocks.forEach { $0.deallocate() } }
    }

    /// Whether entry `index`'s data comes from here.
    func covers(_ index: Int) -> Bool { index >= start && index < endIndex && work[index] }

    /// Stops the workers and waits until they have: called before the reader closes its file.
    func shutdown() {
        condition.lock()
        cancelled = true
        condition.broadcast()
        while running > 0 { condition.wait() }
        condition.unlock()
    }

    // MARK: - The reader's side

    /// Where entry `index`'s data will be found; the batches before it are given back.
    func handle(_ index: Int) -> Handle {
        condition.lock()
        defer { condition.unlock() }
        while true {
            while let oldest = batches.first, oldest.end <= index {
                drop(batches.removeFirst())
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
    func read(_ handle: inout Handle, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
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
            for block in batch.released..<piece.block { give(batch, block) }
            batch.released = piece.block
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
    func verified(_ handle: Handle, head: UnsafeMutableRawBufferPointer) throws -> VerifiedData? {
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
    /// wake-up for every entry finished cost a tenth of validating 100,000 tiny files.
    private func waitAsReader() {
        readerWaiting = true
        condition.wait()
        readerWaiting = false
    }

    /// Wakes the reader if it waits (under the lock); nothing else waits for a worker.
    private func wakeReader() {
        if readerWaiting { condition.broadcast() }
    }

    /// Gives back every block of a batch the reader has left (under the lock).
    private func drop(_ batch: Batch) {
        for block in batch.released..<batch.blocks.count { give(batch, block) }
        batch.released = batch.blocks.count
    }

    /// Gives one block back to the pool (under the lock).
    private func give(_ batch: Batch, _ index: Int) {
        guard let block = batch.blocks[index] else { return }
        batch.blocks[index] = nil
        batch.retained -= block.count
        retained -= block.count
        if pooled + block.count <= Self.maxPooled {
            pool[block.count, default: []].append(block)
            pooled += block.count
        } else {
            block.deallocate()
        }
    }

    // MARK: - The workers' side

    /// The next batch to work on, or nil when there is none (or work was cancelled).
    private func take() -> Batch? {
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
        let batch = Batch(first: first, end: end)
        batches.append(batch)
        wakeReader()
        return batch
    }

    private func run(_ decoder: XarEntryDecoder) {
        let scratch = plan == .verify ? UnsafeMutableRawBufferPointer.allocate(byteCount: Int(XarEntryDecoder.wholeLimit), alignment: 16) : nil
        defer {
            scratch?.deallocate()
            condition.lock()
            running -= 1
            condition.broadcast()
            condition.unlock()
        }
        do {
            while let batch = take() {
                var cursor: (block: Int, used: Int)?
                for index in batch.first..<batch.end where work[index] {
                    try process(index, in: batch, decoder: decoder, cursor: &cursor, scratch: scratch)
                }
                condition.lock()
                wakeReader()
                condition.unlock()
            }
        } catch {
            // Cancelled: the reader has gone.
        }
    }

    /// Decodes and checks one entry, leaving its bytes (or its first bytes) in the batch.
    private func process(_ index: Int, in batch: Batch, decoder: XarEntryDecoder,
                         cursor: inout (block: Int, used: Int)?, scratch: UnsafeMutableRawBufferPointer?) throws {
        let slot = index - batch.first
        condition.lock()
        batch.outcomes[slot].pieceStart = batch.pieces.count
        condition.unlock()
        let record = table.records[index]
        let keep = plan == .verify ? keepLimit(index) : Int.max
        var kept = 0
        var size: Int64 = 0
        var failure: ReadError?

        /// Hands over `bytes` decoded (copying at most what is kept when verifying).
        func emit(_ bytes: UnsafeRawBufferPointer) throws {
            size += Int64(bytes.count)
            guard kept < keep else { return }
            let count = min(bytes.count, keep - kept)
            let target = try space(batch, &cursor, atLeast: count, exact: count)
            target.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[0..<count]))
            commit(batch, slot, &cursor, count)
            kept += count
        }

        do {
            if decoder.fitsWhole(record) {
                let count = Int(record.size)
                let output: UnsafeMutableRawBufferPointer
                if let scratch {
                    output = UnsafeMutableRawBufferPointer(rebasing: scratch[0..<count])
                } else {
                    output = try space(batch, &cursor, atLeast: count, exact: count)
                }
                var done = false
                do {
                    done = try decoder.decodeWhole(index, into: output)
                } catch let error as ReadError {
                    // Inflated cleanly but a digest differs: the bytes are handed over, then the failure.
                    failure = error
                    done = true
                }
                if done {
                    if scratch != nil {
                        try emit(UnsafeRawBufferPointer(output))
                    } else {
                        size = Int64(count)
                        commit(batch, slot, &cursor, count)
                    }
                    finish(batch, slot, size: size, failure: failure)
                    return
                }
            }
            // Streamed: in chunks through zlib, or stored bytes as they are.
            try decoder.start(index)
            while true {
                let target: UnsafeMutableRawBufferPointer
                if let scratch {
                    target = UnsafeMutableRawBufferPointer(rebasing: scratch[0..<min(scratch.count, Self.blockSize)])
                } else {
                    target = try space(batch, &cursor, atLeast: 64 << 10, exact: nil)
                }
                let count = try decoder.read(into: target)
                if count == 0 { break }
                if scratch != nil {
                    try emit(UnsafeRawBufferPointer(rebasing: target[0..<count]))
                } else {
                    size += Int64(count)
                    commit(batch, slot, &cursor, count)
                }
            }
        } catch let error as ReadError {
            failure = error
        }
        finish(batch, slot, size: size, failure: failure)
    }

    /// Room for at least `atLeast` bytes in the batch's current block (exactly `exact` when given),
    /// taking a new block (and waiting for room in the window) when the current one is too full.
    private func space(_ batch: Batch, _ cursor: inout (block: Int, used: Int)?, atLeast: Int, exact: Int?) throws -> UnsafeMutableRawBufferPointer {
        condition.lock()
        defer { condition.unlock() }
        if let current = cursor, let block = batch.blocks[current.block], block.count - current.used >= atLeast {
            let end = exact.map { current.used + $0 } ?? block.count
            return UnsafeMutableRawBufferPointer(rebasing: block[current.used..<end])
        }
        let size = max(Self.blockSize, (atLeast + Self.blockSize - 1) / Self.blockSize * Self.blockSize)
        // The reader's own batch waits only for the reader; later ones wait for room in the window.
        while !cancelled {
            if batch === batches.first ? batch.retained <= Self.streamCap : retained + size <= Self.window { break }
            // The reader may wait for an entry this worker has finished, and be what frees room.
            wakeReader()
            condition.wait()
        }
        if cancelled { throw Cancelled() }
        let block: UnsafeMutableRawBufferPointer
        if var free = pool[size], let reused = free.popLast() {
            pool[size] = free
            pooled -= size
            block = reused
        } else {
            block = .allocate(byteCount: size, alignment: 16)
        }
        batch.blocks.append(block)
        batch.retained += size
        retained += size
        cursor = (batch.blocks.count - 1, 0)
        let end = exact ?? size
        return UnsafeMutableRawBufferPointer(rebasing: block[0..<end])
    }

    /// Publishes `count` bytes just written at the cursor as the entry's next piece.
    private func commit(_ batch: Batch, _ slot: Int, _ cursor: inout (block: Int, used: Int)?, _ count: Int) {
        guard count > 0, let current = cursor else { return }
        condition.lock()
        batch.pieces.append(Piece(block: current.block, start: current.used, count: count))
        batch.outcomes[slot].pieceCount += 1
        batch.outcomes[slot].size += Int64(count)
        if plan == .deliver { wakeReader() }
        condition.unlock()
        cursor = (current.block, current.used + count)
    }

    private func finish(_ batch: Batch, _ slot: Int, size: Int64, failure: ReadError?) {
        condition.lock()
        batch.outcomes[slot].size = size
        batch.outcomes[slot].failure = failure
        batch.outcomes[slot].done = true
        if plan == .deliver || awaited.map({ $0.batch === batch && slot >= $0.slot + Self.wakeAhead }) ?? true { wakeReader() }
        condition.unlock()
    }
}
