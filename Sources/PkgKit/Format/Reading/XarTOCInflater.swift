import Foundation
import PkgKitSupport

/// Inflates the zlib TOC that starts at byte 28 of a xar on a thread of its own, a few chunks
/// ahead of the XML parser that takes them: until the TOC is read there is nothing else for a
/// second core to do, and inflating is a large part of reading a TOC of many files.
///
/// The chunks form a ring of `depth` buffers of `chunkSize` bytes, so memory stays fixed however
/// long the TOC is. The inflater stops with a failure past `maxBytes` of XML: a TOC that inflates
/// without end is refused, not read.
// Unchecked: owns the ring's buffers; a slot is written by the inflating thread only while it is neither filled nor held by the reader.
final class XarTOCInflater: @unchecked Sendable {
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
    private let ring: [UnsafeMutableRawBufferPointer]
    /// What the inflating thread and the reader tell each other.
    private let progress: ConditionLockedValue<Progress>

    private struct Progress {
        /// The bytes in each slot of the ring.
        var counts = Array(repeating: 0, count: XarTOCInflater.depth)
        /// Chunks inflated so far.
        var filled = 0
        /// Chunks the reader has taken (the last one it may still be using).
        var taken = 0
        /// True while the reader uses the chunk it took last.
        var holding = false
        /// Whether the TOC is still being inflated, has ended, or failed.
        var state = State.inflating
        /// True once `stop` asked the thread to end.
        var cancelled = false
        /// True while the inflating thread runs.
        var running = false
    }

    /// An inflater for the TOC of the xar in `bytes`; it works once started.
    package init(bytes: PackageBytes, maxBytes: Int64) {
        self.bytes = bytes
        self.maxBytes = maxBytes
        ring = (0..<Self.depth).map { _ in .allocate(byteCount: Self.chunkSize, alignment: 16) }
        progress = ConditionLockedValue(Progress())
    }

    deinit { ring.forEach { $0.deallocate() } }

    /// Starts inflating on a thread of its own. Call `stop` once no more chunks are wanted: until
    /// then the thread may wait for room in the ring.
    package func start() {
        progress.withLock { $0.running = true }
        Thread.detachNewThread { [self] in run() }
    }

    /// The next chunk of XML (valid until the next call), empty once the TOC has ended. Throws
    /// when it cannot be inflated: unreadable, damaged, cut short, or longer than `maxBytes`.
    package func next() throws(XarTOCError) -> UnsafeRawBufferPointer {
        // The chunk handed out last is free for the inflating thread again.
        progress.withLock(thenWake: .one) { progress in
            if progress.holding {
                progress.taken += 1
                progress.holding = false
            }
        }
        let next = progress.withLock(waitingUntil: { $0.filled != $0.taken || $0.state != .inflating }) {
            progress -> Result<(slot: Int, count: Int)?, XarTOCError> in
            if case .failed(let failure) = progress.state { return .failure(failure) }
            if progress.filled == progress.taken { return .success(nil) }
            progress.holding = true
            let slot = progress.taken % Self.depth
            return .success((slot, progress.counts[slot]))
        }
        guard let (slot, count) = try next.get() else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        return UnsafeRawBufferPointer(rebasing: ring[slot][0..<count])
    }

    /// Stops inflating and waits until the thread has (and so until a read under way returns).
    package func stop() {
        progress.withLock(thenWake: .all) { $0.cancelled = true }
        progress.withLock(waitingUntil: { !$0.running }) { _ in }
    }

    private func run() {
        let inflater = Inflater()
        let input = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.inputSize, alignment: 16)
        var position = Int64(XarHeader.size)
        var total: Int64 = 0
        var outcome = State.inflating
        while outcome == .inflating {
            let (slot, stop) = progress.withLock(waitingUntil: { $0.filled - $0.taken < Self.depth || $0.cancelled }) {
                ($0.filled % Self.depth, $0.cancelled)
            }
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
            progress.withLock(thenWake: .all) { progress in
                if produced > 0 && !outcome.isFailed {
                    progress.counts[slot] = produced
                    progress.filled += 1
                }
                progress.state = outcome
            }
        }
        input.deallocate()
        progress.withLock(thenWake: .all) { progress in
            if progress.state == .inflating { progress.state = .failed(.malformed("the table of contents was not read to its end")) }
            progress.running = false
        }
    }
}
