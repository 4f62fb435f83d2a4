
/// A zlib (RFC 1950) stream decompressor fed in chunks: `Inflater` (zlib), or `FastInflater`
/// (ISA-L) where it is linked. The read side's counterpart of `StreamDeflater`.
protocol StreamInflater: AnyObject {
    /// Starts a new stream, keeping the allocations of the last one.
    func reset()
    /// Hands over the next compressed bytes, which must stay valid until `pendingInput` is 0.
    func supply(_ input: UnsafeRawBufferPointer)
    /// Bytes handed over by `supply` and not used yet.
    var pendingInput: Int { get }
    /// Inflates into `output`: how many bytes were written there, and what the stream did.
    func inflate(into output: UnsafeMutableRawBufferPointer) -> (count: Int, status: InflateStatus)
}

/// What one call of `StreamInflater.inflate` found.
package enum InflateStatus: Equatable {
    /// The stream went on; call again.
    case more
    /// Nothing more comes out without more input.
    case needsInput
    /// The stream ended, its check value right.
    case ended
    /// The stream is damaged: the library's words.
    case corrupt(String)
}

/// The fastest stream inflater linked here: ISA-L's, else zlib's. What ISA-L does not end cleanly
/// its callers stream again through `Inflater`, whose words every diagnostic uses.
func makeStreamInflater() -> StreamInflater {
    #if canImport(CIsal)
    return FastInflater()
    #else
    return Inflater()
    #endif
}
