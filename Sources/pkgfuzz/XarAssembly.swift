import Crypto
import Foundation
import PkgKit

/// A xar package taken apart into its table of contents (the XML) and its heap, and put back
/// together around another TOC: what the delivery targets hand the fuzzer to rewrite. The heap's
/// first 20 bytes are the sha1 of the compressed TOC, as every xar writer places it, so that a
/// rewritten TOC still reaches the parts of the reader that come after its own checksum.
struct XarAssembly {
    /// The TOC's XML, uncompressed.
    var toc: [UInt8]
    /// Everything after the compressed TOC.
    var heap: [UInt8]

    /// The TOC and heap of the xar `bytes`; nil when its header or TOC does not read.
    init?(package bytes: [UInt8]) {
        guard bytes.count >= 28, bytes.starts(with: Array("xar!".utf8)) else { return nil }
        let compressed = Int(bytes[8..<16].reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
        let plain = Int(bytes[16..<24].reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
        guard compressed > 0, plain > 0, plain < 16 << 20, 28 + compressed <= bytes.count else { return nil }
        var output = [UInt8](repeating: 0, count: plain)
        let inflated = bytes[28 ..< 28 + compressed].withUnsafeBytes { input in
            output.withUnsafeMutableBytes { WholeBufferInflater().inflate(input, into: $0) }
        }
        guard inflated else { return nil }
        toc = output
        heap = Array(bytes[(28 + compressed)...])
    }

    /// A package of `toc` over `heap`.
    init(toc: [UInt8], heap: [UInt8]) {
        self.toc = toc
        self.heap = heap
    }

    /// The package: header, the TOC compressed with zlib, the heap with the TOC's sha1 first.
    var bytes: [UInt8] {
        let compressed = Self.zlib(toc)
        var out = Array("xar!".utf8)
        out += Self.bigEndian(UInt16(28)) + Self.bigEndian(UInt16(1))
        out += Self.bigEndian(UInt64(compressed.count)) + Self.bigEndian(UInt64(toc.count)) + Self.bigEndian(UInt32(1))
        out += compressed
        var heap = heap
        let digest = Array(Insecure.SHA1.hash(data: compressed))
        if heap.count >= digest.count { heap.replaceSubrange(0 ..< digest.count, with: digest) }
        return out + heap
    }

    /// `input` as one zlib stream.
    static func zlib(_ input: [UInt8]) -> [UInt8] {
        let deflater = Deflater(level: 5)
        var out: [UInt8] = []
        input.withUnsafeBytes { raw in
            try? deflater.compress(raw) { out += $0 }
            try? deflater.finish { out += $0 }
        }
        return out
    }

    /// `value`'s bytes, most significant first.
    private static func bigEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian) { Array($0) }
    }
}
