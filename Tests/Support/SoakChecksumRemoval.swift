import CZlib
import Crypto
import Foundation

/// Rewrites a xar package so that some files carry no checksum in its TOC, as other writers may
/// leave them out: the soak publishes such packages so that a sync which takes those files' bytes
/// from ranges without verifying them shows (a server that alters a range then gets altered bytes
/// installed). The heap is kept as it is, its first 20 bytes (the TOC's sha1) recomputed, so the
/// package stays valid and every other file's data stays where the TOC says.
enum SoakChecksumRemoval {
    /// Removes the `<archived-checksum>` and `<extracted-checksum>` of each file whose last path
    /// component is in `names` from the package at `path`, in place; returns, of those it found,
    /// the ones stored as they are (not compressed), with where each one's data starts in the
    /// rewritten package.
    static func strip(_ names: [String], inPackageAt path: String) throws -> [(name: String, offset: Int)] {
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let compressedLength = Int(bytes[8..<16].reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
        let plainLength = Int(bytes[16..<24].reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
        var plain = [UInt8](repeating: 0, count: plainLength)
        var produced = uLong(plainLength)
        let status = plain.withUnsafeMutableBufferPointer { output in
            bytes.withUnsafeBufferPointer { input in
                uncompress(output.baseAddress, &produced, input.baseAddress! + 28, uLong(compressedLength))
            }
        }
        guard status == Z_OK, Int(produced) == plainLength else { throw ServerError("the TOC of \(path) does not inflate (\(status))") }
        var toc = String(decoding: plain, as: UTF8.self)
        var stripped: [(name: String, heapOffset: Int)] = []
        for name in names {
            guard let named = toc.range(of: "<name>\(name)</name>"),
                  let end = toc.range(of: "</file>", range: named.upperBound ..< toc.endIndex) else { continue }
            var element = String(toc[named.lowerBound ..< end.lowerBound])
            for tag in ["archived-checksum", "extracted-checksum"] {
                while let open = element.range(of: "<\(tag)"), let close = element.range(of: "</\(tag)>", range: open.upperBound ..< element.endIndex) {
                    element.removeSubrange(open.lowerBound ..< close.upperBound)
                }
            }
            toc.replaceSubrange(named.lowerBound ..< end.lowerBound, with: element)
            // A zlib stream's own check catches most alterations: only stored data goes in as sent.
            if element.contains("application/octet-stream"), let open = element.range(of: "<offset>"), let close = element.range(of: "</offset>", range: open.upperBound ..< element.endIndex),
               let offset = Int(element[open.upperBound ..< close.lowerBound]) {
                stripped.append((name, offset))
            }
        }
        let newPlain = Array(toc.utf8)
        let compressed = XarCrafter.zlib(newPlain)
        var out = Array(bytes[0..<8])
        withUnsafeBytes(of: UInt64(compressed.count).bigEndian) { out += $0 }
        withUnsafeBytes(of: UInt64(newPlain.count).bigEndian) { out += $0 }
        out += bytes[24..<28]
        out += compressed
        var heap = Array(bytes[(28 + compressedLength)...])
        heap.replaceSubrange(0..<20, with: Array(Insecure.SHA1.hash(data: compressed)))
        try Data(out + heap).write(to: URL(fileURLWithPath: path))
        return stripped.map { ($0.name, out.count + $0.heapOffset) }
    }
}
