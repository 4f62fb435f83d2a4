/// A zlib stream compressor fed in chunks: `Deflater` (zlib), or `FastDeflater` (ISA-L).
protocol StreamDeflater: AnyObject {
    func compress(_ input: UnsafeRawBufferPointer, sink: (UnsafeRawBufferPointer) throws -> Void) throws
    func finish(sink: (UnsafeRawBufferPointer) throws -> Void) throws
    func reset()
}
