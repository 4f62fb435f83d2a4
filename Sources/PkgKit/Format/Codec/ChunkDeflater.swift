#if canImport(CIsal)
internal import CIsal
#endif
internal import CZlib

/// One zlib stream for a chunked file: compressed as usual, but fully flushed at every chunk
/// boundary (`flush`), so that each chunk's bytes inflate on their own, with no history from the
/// chunks before. ISA-L at its levels 1–3 where it is linked, zlib otherwise (libdeflate cannot
/// flush). Fed in the same pieces, it gives the same bytes.
final class ChunkDeflater {
    #if canImport(CIsal)
    private var isal: UnsafeMutablePointer<isal_zstream>?
    private var work: UnsafeMutableRawBufferPointer?
    #endif
    /// Allocated, not a stored value: zlib's state points back at its stream, which must not move.
    private var zlib: UnsafeMutablePointer<z_stream>?
    private let output: UnsafeMutableRawBufferPointer

    /// A stream at `level` (1–9).
    init(level: Int32) {
        output = .allocate(byteCount: 64 * 1024, alignment: 64)
        #if canImport(CIsal)
        let size = Int(CIsal_levelBufferSize(level))
        if size > 0 {
            let stream = UnsafeMutablePointer<isal_zstream>.allocate(capacity: 1)
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 64)
            CIsal_start(stream, level, buffer.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt32(size))
            (isal, work) = (stream, buffer)
            return
        }
        #endif
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let status = CZlib_deflateInit(stream, level)
        precondition(status == Z_OK, "deflateInit failed: \(status)")
        zlib = stream
    }

    deinit {
        #if canImport(CIsal)
        isal?.deallocate()
        work?.deallocate()
        #endif
        if let zlib {
            deflateEnd(zlib)
            zlib.deallocate()
        }
        output.deallocate()
    }

    /// Compresses `input` (part of the current chunk).
    func compress(_ input: UnsafeRawBufferPointer, sink: (UnsafeRawBufferPointer) throws -> Void) throws {
        guard !input.isEmpty else { return }
        try run(input, mode: .none, sink: sink)
    }

    /// Ends the current chunk: everything so far is out, byte-aligned, and the history is dropped.
    func flush(sink: (UnsafeRawBufferPointer) throws -> Void) throws {
        try run(UnsafeRawBufferPointer(start: nil, count: 0), mode: .full, sink: sink)
    }

    /// Ends the stream (final block and adler32).
    func finish(sink: (UnsafeRawBufferPointer) throws -> Void) throws {
        try run(UnsafeRawBufferPointer(start: nil, count: 0), mode: .finish, sink: sink)
    }

    private enum Mode { case none, full, finish }

    private func run(_ input: UnsafeRawBufferPointer, mode: Mode, sink: (UnsafeRawBufferPointer) throws -> Void) throws {
        #if canImport(CIsal)
        if let stream = isal {
            stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: UInt8.self))
            stream.pointee.avail_in = UInt32(input.count)
            stream.pointee.flush = mode == .full ? UInt16(FULL_FLUSH) : UInt16(NO_FLUSH)
            stream.pointee.end_of_stream = mode == .finish ? 1 : 0
            repeat {
                stream.pointee.next_out = output.baseAddress!.assumingMemoryBound(to: UInt8.self)
                stream.pointee.avail_out = UInt32(output.count)
                let status = isal_deflate(stream)
                guard status == COMP_OK else { throw WriteError.compression("ISA-L deflate failed (\(status))") }
                let produced = output.count - Int(stream.pointee.avail_out)
                if produced > 0 { try sink(UnsafeRawBufferPointer(rebasing: output[0..<produced])) }
            } while stream.pointee.avail_in > 0 || stream.pointee.avail_out == 0 || (mode == .finish && CIsal_ended(stream) == 0)
            stream.pointee.flush = UInt16(NO_FLUSH)
            return
        }
        #endif
        let flush = mode == .none ? Z_NO_FLUSH : mode == .full ? Z_FULL_FLUSH : Z_FINISH
        let zlib = zlib!
        zlib.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
        zlib.pointee.avail_in = uInt(input.count)
        while true {
            zlib.pointee.next_out = output.baseAddress!.assumingMemoryBound(to: Bytef.self)
            zlib.pointee.avail_out = uInt(output.count)
            let status = deflate(zlib, flush)
            guard status == Z_OK || status == Z_STREAM_END || status == Z_BUF_ERROR else {
                throw WriteError.compression("deflate failed (\(status))")
            }
            let produced = output.count - Int(zlib.pointee.avail_out)
            if produced > 0 { try sink(UnsafeRawBufferPointer(rebasing: output[0..<produced])) }
            if status == Z_STREAM_END || (zlib.pointee.avail_out > 0 && zlib.pointee.avail_in == 0 && mode != .finish) { return }
        }
    }
}
