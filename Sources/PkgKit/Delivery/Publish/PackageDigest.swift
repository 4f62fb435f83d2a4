import Crypto
import Foundation
import PkgKitSupport
import PkgKitDiagnostics

/// A package file's catalog digests: its size, the sha256 of all its bytes and, for a xar, the
/// sha256 of its header and compressed TOC (`tocSHA256`), all from one streaming read.
package struct PackageDigest: Sendable, Equatable {
    package var size: Int64
    package var sha256: String
    package var tocSHA256: String?

    /// Reads `path` once. `xar` asks for `tocSHA256`: bytes `0 ..< header size + compressed TOC
    /// length`, the lengths taken from the header. A set `cancellation` stops the read
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
            var header = [UInt8](repeating: 0, count: 28)
            let got = header.withUnsafeMutableBytes { readFully(fd, $0, at: 0) }
            guard got == 28, header.starts(with: Array("xar!".utf8)) else {
                throw PublishError(path: path, "not a xar: its header cannot be read", code: .unreadableInput)
            }
            let headerSize = Int64(header[4]) << 8 | Int64(header[5])
            let tocLength = header[8..<16].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            guard tocLength <= UInt64(Int64.max / 2) else { throw PublishError(path: path, "the xar header's TOC length is impossible", code: .unreadableInput) }
            tocEnd = headerSize + Int64(tocLength)
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
