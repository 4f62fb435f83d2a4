
#if canImport(CIsal)
internal import CIsal

/// A zlib (RFC 1950) decompressor fed in chunks, through ISA-L: over twice zlib's speed on large
/// text. Linked on Linux only: `makeStreamInflater` picks it where it is.
///
/// ISA-L's zlib mode checks the stream's Adler-32 trailer itself. Its failures carry only a status
/// number: callers that must say what is wrong stream the data again through `Inflater`.
final class FastInflater: StreamInflater {
    /// ISA-L's streaming state: 87 KB.
    private let state: UnsafeMutablePointer<inflate_state> = .allocate(capacity: 1)

    package init() { reset() }

    deinit { state.deallocate() }

    package func reset() {
        isal_inflate_init(state)
        state.pointee.crc_flag = UInt32(ISAL_ZLIB)
    }

    package func supply(_ input: UnsafeRawBufferPointer) {
        state.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: UInt8.self))
        state.pointee.avail_in = UInt32(input.count)
    }

    package var pendingInput: Int { Int(state.pointee.avail_in) }

    package func inflate(into output: UnsafeMutableRawBufferPointer) -> (count: Int, status: InflateStatus) {
        let room = min(output.count, Int(UInt32.max))
        state.pointee.next_out = output.baseAddress?.assumingMemoryBound(to: UInt8.self)
        state.pointee.avail_out = UInt32(room)
        let status = isal_inflate(state)
        let count = room - Int(state.pointee.avail_out)
        guard status == ISAL_DECOMP_OK else { return (count, .corrupt("ISA-L error \(status)")) }
        if state.pointee.block_state == ISAL_BLOCK_FINISH { return (count, .ended) }
        // Nothing out and all input taken in: ISA-L, unlike zlib, says so only by the counts.
        if count == 0 && state.pointee.avail_in == 0 { return (count, .needsInput) }
        return (count, .more)
    }
}
#endif
