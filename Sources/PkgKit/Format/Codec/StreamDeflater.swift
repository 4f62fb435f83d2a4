
/// A zlib stream compressor fed in pieces: `Deflater` (zlib), or `FastDeflater` (ISA-L). Fed in
/// the same pieces, and flushed at the same places, it gives the same bytes.
package protocol StreamDeflater: AnyObject {
    func compress(_ input: UnsafeRawBufferPointer, sink: (UnsafeRawBufferPointer) throws -> Void) throws
    /// Ends a chunk of a chunked file: everything so far is out, byte-aligned, and the history is
    /// dropped (a full flush), so the bytes that follow inflate without those before.
    func flush(sink: (UnsafeRawBufferPointer) throws -> Void) throws
    func finish(sink: (UnsafeRawBufferPointer) throws -> Void) throws
    func reset()
}
