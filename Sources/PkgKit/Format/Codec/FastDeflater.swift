
#if canImport(CIsal)
internal import CIsal
#endif

/// create's fast levels (1–3): ISA-L's streaming deflate, several times zlib's speed for output
/// a few percent larger than zlib level 6's on text, and smaller on small text files. It streams,
/// so it serves files of any size in bounded memory. Linked on Linux only; elsewhere `init`
/// returns nil and those levels go to libdeflate or zlib.
///
/// The bytes depend only on the input and on the chunks it is fed in, which `FileEncoder` keeps
/// fixed (its buffer's size), so the output is reproducible.
final class FastDeflater: StreamDeflater {
    #if canImport(CIsal)
    private let stream: UnsafeMutablePointer<isal_zstream>
    private let work: UnsafeMutableRawBufferPointer
    private let output: UnsafeMutableRawBufferPointer
    private let level: Int32
    #endif

    /// Whether this platform has the fast levels.
    package static var isAvailable: Bool {
        #if canImport(CIsal)
        return true
        #else
        return false
        #endif
    }

    /// A compressor at `level` (1–3), or nil for another level or where ISA-L is not linked.
    package init?(level: Int32) {
        #if canImport(CIsal)
        let size = Int(CIsal_levelBufferSize(level))
        guard size > 0 else { return nil }
        self.level = level
        stream = .allocate(capacity: 1)
        work = .allocate(byteCount: size, alignment: 64)
        output = .allocate(byteCount: 64 * 1024, alignment: 64)
        reset()
        #else
        return nil
        #endif
    }

    deinit {
        #if canImport(CIsal)
        stream.deallocate()
        work.deallocate()
        output.deallocate()
        #endif
    }

    package func reset() {
        #if canImport(CIsal)
        CIsal_start(stream, level, work.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt32(work.count))
        #endif
    }

    package func compress(_ input: UnsafeRawBufferPointer, sink: (UnsafeRawBufferPointer) throws -> Void) throws {
        #if canImport(CIsal)
        guard let base = input.baseAddress, !input.isEmpty else { return }
        precondition(input.count <= Int(UInt32.max), "chunks are at most a buffer")
        stream.pointee.next_in = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: UInt8.self))
        stream.pointee.avail_in = UInt32(input.count)
        stream.pointee.end_of_stream = 0
        repeat {
            try run(sink)
        } while stream.pointee.avail_in > 0 || stream.pointee.avail_out == 0
        #endif
    }

    package func flush(sink: (UnsafeRawBufferPointer) throws -> Void) throws {
        #if canImport(CIsal)
        stream.pointee.next_in = nil
        stream.pointee.avail_in = 0
        stream.pointee.flush = UInt16(FULL_FLUSH)
        repeat {
            try run(sink)
        } while stream.pointee.avail_out == 0
        stream.pointee.flush = UInt16(NO_FLUSH)
        #endif
    }

    package func finish(sink: (UnsafeRawBufferPointer) throws -> Void) throws {
        #if canImport(CIsal)
        stream.pointee.next_in = nil
        stream.pointee.avail_in = 0
        stream.pointee.end_of_stream = 1
        repeat {
            try run(sink)
        } while CIsal_ended(stream) == 0
        #endif
    }

    #if canImport(CIsal)
    private func run(_ sink: (UnsafeRawBufferPointer) throws -> Void) throws {
        stream.pointee.next_out = output.baseAddress!.assumingMemoryBound(to: UInt8.self)
        stream.pointee.avail_out = UInt32(output.count)
        let status = isal_deflate(stream)
        guard status == COMP_OK else { throw WriteError.compression("ISA-L deflate failed (\(status))") }
        let produced = output.count - Int(stream.pointee.avail_out)
        if produced > 0 { try sink(UnsafeRawBufferPointer(rebasing: output[0..<produced])) }
    }
    #endif
}
