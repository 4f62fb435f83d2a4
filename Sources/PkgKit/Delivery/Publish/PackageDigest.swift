import Crypto
import Foundation
import PkgKitSupport
import PkgKitDiagnostics
import PkgKitFormat

/// A package file's catalog digests: its size, the sha256 of all its bytes and, for a xar, the
/// sha256 of its header and compressed TOC (`tocSHA256`), all from one streaming read.
package struct PackageDigest: Sendable, Equatable {
    package var size: Int64
    package var sha256: String
    package var tocSHA256: String?

    /// Reads `path` once. `xar` asks for `tocSHA256`: the sha256 of `XarHeader.anchoredBytes`. A set `cancellation` stops the read
    /// (`OperationCancelled`).
    package static func compute(_ path: String, xar: Bool, cancellation: Cancellation? = nil) throws -> PackageDigest {
        try stream(path, xar: xar) { _ in try cancellation?.check() }
    }

    /// Reads `path` once, handing every block to `sink` as it goes (to copy while hashing).
    /// The package given cannot be read: `PublishError` with `unreadable-input`.
    package static func stream(_ path: String, xar: Bool, sink: (UnsafeRawBufferPointer) throws -> Void) throws -> PackageDigest {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw PublishError(path: path, "cannot read: \(errnoText())", code: .unreadableInput) }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var whole = SHA256(), toc = SHA256()
        var tocEnd: Int64 = 0
        if xar {
            var header = [UInt8](repeating: 0, count: XarHeader.size)
            let got = header.withUnsafeMutableBytes { readFully(fd, $0, at: 0) }
            do {
                tocEnd = try XarHeader.parse(header[0..<max(got, 0)]).anchoredBytes.upperBound
            } catch {
                throw PublishError(path: path, "not a xar pkgtool reads: \(error)", code: .unreadableInput)
            }
        }
        var offset: Int64 = 0
        while true {
            let got = buffer.withUnsafeMutableBytes { readFully(fd, $0, at: offset) }
            guard got >= 0 else { throw PublishError(path: path, "cannot read: \(errnoText())", code: .unreadableInput) }
            if got == 0 { break }
            try buffer.withUnsafeBytes { bytes in
                let block = UnsafeRawBufferPointer(rebasing: bytes[0..<got])
                whole.update(bufferPointer: block)
                if offset < tocEnd {
                    let inTOC = Int(min(Int64(got), tocEnd - offset))
                    toc.update(bufferPointer: UnsafeRawBufferPointer(rebasing: bytes[0..<inTOC]))
                }
                try sink(block)
            }
            offset += Int64(got)
        }
        if xar && offset < tocEnd { throw PublishError(path: path, "the xar is shorter than its header and TOC", code: .unreadableInput) }
        return PackageDigest(size: offset, sha256: whole.finalize().hexString, tocSHA256: xar ? toc.finalize().hexString : nil)
    }
}
