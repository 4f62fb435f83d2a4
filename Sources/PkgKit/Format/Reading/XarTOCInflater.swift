import Foundation
internal import CZlib

/// Inflates the zlib TOC that starts at byte 28 of a xar file on a thread of its own, a few
/// chunks ahead of the XML parser that takes them. On a 100,000-file package inflating is a
/// quarter of reading the TOC, and until the TOC is read there is nothing else for a second core
/// to do.
///
/// The chunks form a ring of `depth` buffers of `chunkSize` bytes, so memory stays fixed however
/// long the TOC is. The inflater stops with a failure past `maxBytes` of XML: a TOC that inflates
/// without end is refused, not read.
// Unchecked: `filled`, `taken`, `counts`, `state`, `cancelled` and `stopped` are touched only
// under `condition`; a ring slot is written by the inflating thread only while it is neither
// filled nor held by the reader, which `filled - taken < depth` guarantees.
final class XarTOCInflater: @unchecked Sendable {
    static let chunkSize = 128 << 10
    static let depth = 4
    /// Compressed bytes read from the package at a time.
    static let inputSize = 64 << 10

    private enum State { case inflating, ended, failed }

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
    private var stopped = false

    /// Starts inflating the TOC of the xar in `bytes`; `stop` must be called before it goes.
    init(bytes: PackageBytes, maxBytes: Int64) {
        self.bytes = bytes
        self.maxBytes = maxBytes
        ring = (0..<Self.depth).map { _ in .allocate(byteCount: Self.chunkSize, alignment: 16) }
        counts = Array(repeating: 0, count: Self.depth)
        Thread.detachNewThread { [self] in run() }
    }

    deinit { ring.forEach { $0.deallocate() } }

    /// The next chunk of XML (valid until the next call), empty once the TOC has ended; nil when
    /// it cannot be read or inflated (unreadable, damaged, truncated, or longer than `maxBytes`).
    func next() -> UnsafeRawBufferPointer? {
        condition.lock()
        defer { condition.unlock() }
        if holding {
            taken += 1
            holding = false
            condition.signal()
        }
        while filled == taken && state == .inflating { condition.wait() }
        if state == .failed { return nil }
        if filled == taken { return UnsafeRawBufferPointer(start: nil, count: 0) }
        holding = true
        let slot = taken % Self.depth
        return UnsafeRawBufferPointer(rebasing: ring[slot][0..<counts[slot]])
    }

    /// Stops inflating and waits until the thread has (and so until a read under way returns).
    func stop() {
        condition.lock()
        cancelled = true
        condition.broadcast()
        while !stopped { condition.wait() }
        condition.unlock()
    }

    private func run() {
        var stream = z_stream()
        CZlib_inflateInit(&stream)
        let input = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.inputSize, alignment: 16)
        var position: Int64 = 28
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
            stream.next_out = chunk.baseAddress!.assumingMemoryBound(to: Bytef.self)
            stream.avail_out = uInt(chunk.count)
            while stream.avail_out > 0 {
                if stream.avail_in == 0 {
                    let count = (try? bytes.readChecked(into: input, at: position)) ?? 0
                    guard count > 0 else { outcome = .failed; break }
                    position += Int64(count)
                    stream.next_in = input.baseAddress!.assumingMemoryBound(to: Bytef.self)
                    stream.avail_in = uInt(count)
                }
                let status = inflate(&stream, Z_NO_FLUSH)
                if status == Z_STREAM_END { outcome = .ended; break }
                if status != Z_OK { outcome = .failed; break }
            }
            let produced = chunk.count - Int(stream.avail_out)
            total += Int64(produced)
            if total > maxBytes { outcome = .failed }
            condition.lock()
            if produced > 0 && outcome != .failed {
                counts[slot] = produced
                filled += 1
            }
            state = outcome
            condition.broadcast()
            condition.unlock()
        }
        inflateEnd(&stream)
        input.deallocate()
        condition.lock()
        if state == .inflating { state = .failed }
        stopped = true
        condition.broadcast()
        condition.unlock()
    }
}
