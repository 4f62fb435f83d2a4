internal import CZlib
#if canImport(CDeflate)
internal import CDeflate
#endif
#if canImport(CIsal)
internal import CIsal
#endif

/// Whole-buffer zlib streams (RFC 1950), for data whose sizes are known up front (the xar TOC gives
/// every file's stored and unpacked length). libdeflate does this two to three times faster than
/// zlib's streaming interface, and ISA-L's inflate faster still; they are linked where the
/// platform has them (Linux), and zlib does the same work everywhere else, so the core still
/// builds for an iOS app.
///
/// Each value holds its engine's state: one per thread, never shared.
package final class WholeBufferInflater {
    /// Which library does the work.
    package enum Engine: Sendable, CaseIterable {
        case isal
        case libdeflate
        case zlib

        /// ISA-L where it is linked, else libdeflate, else zlib.
        static var preferred: Engine { available[0] }

        /// The engines linked here, fastest first.
        package static var available: [Engine] {
            allCases.filter { engine in
                switch engine {
                case .isal:
                    #if canImport(CIsal)
                    return true
                    #else
                    return false
                    #endif
                case .libdeflate:
                    #if canImport(CDeflate)
                    return true
                    #else
                    return false
                    #endif
                case .zlib:
                    return true
                }
            }
        }
    }

    package let engine: Engine
    #if canImport(CDeflate)
    private let decompressor: OpaquePointer?
    #endif
    #if canImport(CIsal)
    /// ISA-L's state: 87 KB, set up again for every stream.
    private let isalState: UnsafeMutablePointer<inflate_state>?
    #endif

    package init(engine: Engine = .preferred) {
        self.engine = Engine.available.contains(engine) ? engine : .zlib
        #if canImport(CDeflate)
        decompressor = self.engine == .libdeflate ? libdeflate_alloc_decompressor() : nil
        #endif
        #if canImport(CIsal)
        isalState = self.engine == .isal ? .allocate(capacity: 1) : nil
        #endif
    }

    deinit {
        #if canImport(CDeflate)
        if let decompressor { libdeflate_free_decompressor(decompressor) }
        #endif
        #if canImport(CIsal)
        isalState?.deallocate()
        #endif
    }

    /// Inflates `input`, which must be exactly one zlib stream with nothing after it, into exactly
    /// `output.count` bytes. False for anything else (corrupt, shorter, longer, trailing bytes):
    /// the caller then reads the entry again with streaming zlib, which says precisely what is wrong.
    package func inflate(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> Bool {
        guard let source = input.baseAddress, !input.isEmpty else { return false }
        #if canImport(CIsal)
        if let state = isalState {
            guard input.count <= Int(UInt32.max), output.count <= Int(UInt32.max) else { return false }
            var spare: UInt8 = 0
            return withUnsafeMutablePointer(to: &spare) { spare in
                isal_inflate_init(state)
                // ISA-L checks the stream's Adler-32 trailer itself in this mode.
                state.pointee.crc_flag = UInt32(ISAL_ZLIB)
                state.pointee.next_in = UnsafeMutablePointer(mutating: source.assumingMemoryBound(to: UInt8.self))
                state.pointee.avail_in = UInt32(input.count)
                state.pointee.next_out = output.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? spare
                state.pointee.avail_out = UInt32(output.count)
                let result = isal_inflate_stateless(state)
                return result == ISAL_DECOMP_OK && state.pointee.avail_in == 0 && Int(state.pointee.total_out) == output.count
            }
        }
        #endif
        #if canImport(CDeflate)
        if let decompressor {
            var used = 0
            var produced = 0
            // An empty output has no base address; libdeflate accepts any pointer for zero bytes.
            let target = output.baseAddress ?? UnsafeMutableRawPointer(mutating: source)
            let result = libdeflate_zlib_decompress_ex(decompressor, source, input.count, target, output.count, &used, &produced)
            return result == LIBDEFLATE_SUCCESS && used == input.count && produced == output.count
        }
        #endif
        guard input.count <= Int(UInt32.max), output.count <= Int(UInt32.max) else { return false }
        var stream = z_stream()
        guard CZlib_inflateInit(&stream) == Z_OK else { return false }
        defer { inflateEnd(&stream) }
        var spare: UInt8 = 0
        stream.next_in = UnsafeMutablePointer(mutating: source.assumingMemoryBound(to: Bytef.self))
        stream.avail_in = uInt(input.count)
        return withUnsafeMutablePointer(to: &spare) { spare in
            stream.next_out = output.baseAddress?.assumingMemoryBound(to: Bytef.self) ?? spare
            stream.avail_out = uInt(output.count)
            let status = CZlib.inflate(&stream, Z_FINISH)
            return status == Z_STREAM_END && stream.avail_in == 0 && stream.avail_out == 0
        }
    }
}

/// Whole-buffer zlib compression with libdeflate, where it is linked: `create` uses it for the
/// files `DeflateProfile` gives it (a streaming engine does the rest, and all of it where
/// libdeflate is missing). Its output is a plain zlib stream that any reader inflates; for a given level it is
/// reproducible, but not the same bytes as zlib's.
package final class WholeBufferDeflater {
    #if canImport(CDeflate)
    private let compressor: OpaquePointer
    #endif

    /// Whether libdeflate is linked here.
    package static var isAvailable: Bool {
        #if canImport(CDeflate)
        return true
        #else
        return false
        #endif
    }

    /// A compressor at `level` (1–12, `DeflateProfile` picks it), or nil where libdeflate is not
    /// linked.
    package init?(level: Int32) {
        #if canImport(CDeflate)
        guard let compressor = libdeflate_alloc_compressor(level) else { return nil }
        self.compressor = compressor
        #else
        return nil
        #endif
    }

    deinit {
        #if canImport(CDeflate)
        libdeflate_free_compressor(compressor)
        #endif
    }

    /// The most bytes `compress` may need for `count` input bytes.
    package func bound(_ count: Int) -> Int {
        #if canImport(CDeflate)
        return libdeflate_zlib_compress_bound(compressor, count)
        #else
        return 0
        #endif
    }

    /// Compresses all of `input` into `output` as one zlib stream; the bytes written, or 0 when
    /// `output` is too small.
    package func compress(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> Int {
        #if canImport(CDeflate)
        guard let target = output.baseAddress else { return 0 }
        return libdeflate_zlib_compress(compressor, input.baseAddress, input.count, target, output.count)
        #else
        return 0
        #endif
    }
}
