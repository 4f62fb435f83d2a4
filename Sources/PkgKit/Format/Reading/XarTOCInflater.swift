import Foundation

/// Inflates the zlib TOC that starts at byte 28 of a xar on a thread of its own, a few chunks
/// ahead of the XML parser that takes them: until the TOC is read there is nothing else for a
/// second core to do, and inflating is a large part of reading a TOC of many files.
///
/// The chunks form a ring of `depth` buffers of `chunkSize` bytes, so memory stays fixed however
/// long the TOC is. The inflater stops with a failure past `maxBytes` of XML: a TOC that inflates
/// without end is refused, not read.
// Unchecked: `filled`, `taken`, `counts`, `holding`, `state`, `cancelled` and `running` are touched
// only under `condition`; a ring slot is written by the inflating thread only while it is neither
// filled nor held by the reader, which `filled - taken < depth` guarantees.
package final class XarTOCInflater: @unchecked Sendable {
    package static let chunkSize = 128 << 10
    package static let depth = 4
    /// Compressed bytes read from the package at a time.
    package static let inputSize = 64 << 10

    private enum State: Equatable {
        case inflating, ended
        case failed(XarTOCError)

        var isFailed: Bool {
            if case .failed = self { return true }
            return false
        }
    }

    private let bytes: PackageBytes
    private let maxBytes: Int64
    private let condition = NSCondition()
    private let ring: [UnsafeMutableRawBufferPointer]
    private var counts: [Int]
    /// Chunks inflated so far, and chunks the reader has taken (the last one it is still using).
    private var filled = 0
    private var taken = 0
    private var holding = false
    private var state = State.inflating
    private var cancelled = false
    private var running = false

    /// An inflater for the TOC of the xar in `bytes`; it works once started.
    package init(bytes: PackageBytes, maxBytes: Int64) {
        self.bytes = bytes
        self.maxBytes = maxBytes
        ring = (0..<Self.depth).map { _ in .allocate(byteCount: Self.chunkSize, alignment: 16) }
        counts = Array(repeating: 0, count: Self.depth)
    }

    deinit { ring.forEach { $0.deallocate() } }

    /// Starts inflating on a thread of its own. Call `stop` once no more chunks are wanted: until
    /// then the thread may wait for room in the ring.
    package func start() {
        condition.lock()
        running = true
        condition.unlock()
        Thread.detachNewThread { [self] in run() }
    }

    /// The next chunk of XML (valid until the next call), empty once the TOC has ended. Throws
    /// when it cannot be inflated: unreadable, damaged, cut short, or longer than `maxBytes`.
    package func next() throws(XarTOCError) -> UnsafeRawBufferPointer {
        condition.lock()
        defer { condition.unlock() }
        if holding {
            taken += 1
            holding = false
            condition.signal()
        }
        while filled == taken && state == .inflating { condition.wait() }
        if case .failed(let failure) = state { throw failure }
        if filled == taken { return UnsafeRawBufferPointer(start: nil, count: 0) }
        holding = true
        let slot = taken % Self.depth
        return UnsafeRawBufferPointer(rebasing: ring[slot][0..<counts[slot]])
    }

    /// Stops inflating and waits until the thread has (and so until a read under way returns).
    package func stop() {
        condition.lock()
        cancelled = true
        condition.broadcast()
        while running { condition.wait() }
        condition.unlock()
    }

    private func run() {
        let inflater = Inflater()
        let input = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.inputSize, alignment: 16)
        var position = Int64(XarHeader.size)
        var total: Int64 = 0
        var outcome = State.inflating
        while outcome == .inflating {
            condition.lock()
            while filled - taken == Self.depth && !cancelled { condition.wait() }
            let slot = filled % Self.depth
            let stop = cancelled
            condition.unlock()
            if stop { break }
            let chunk = ring[slot]
            var produced = 0
            fill: while produced < chunk.count {
                if inflater.pendingInput == 0 {
                    let count: Int
                    do {
                        count = try bytes.readChecked(into: input, at: position)
                    } catch {
                        outcome = .failed(XarTOCError(sourceFailure: error))
                        break fill
                    }
                    guard count > 0 else {
                        outcome = .failed(.malformed("the table of contents is cut short: the file ends inside it"))
                        break fill
                    }
                    position += Int64(count)
                    inflater.supply(UnsafeRawBufferPointer(rebasing: input[0..<count]))
                }
                let (count, status) = inflater.inflate(into: UnsafeMutableRawBufferPointer(rebasing: chunk[produced...]))
                produced += count
                switch status {
                case .more: continue
                case .ended: outcome = .ended
                case .needsInput: outcome = .failed(.malformed("the table of contents is not a complete zlib stream"))
                case .corrupt(let message): outcome = .failed(.malformed("the table of contents is not a valid zlib stream (zlib: \(message))"))
                }
                break fill
            }
            total += Int64(produced)
            if total > maxBytes { outcome = .failed(.limitPassed(.xmlBytes)) }
            condition.lock()
            if produced > 0 && !outcome.isFailed {
                counts[slot] = produced
                filled += 1
            }
            state = outcome
            condition.broadcast()
            condition.unlock()
        }
        input.deallocate()
        condition.lock()
        if state == .inflating { state = .failed(.malformed("the table of contents was not read to its end")) }
        running = false
        condition.broadcast()
        condition.unlock()
    }
}
