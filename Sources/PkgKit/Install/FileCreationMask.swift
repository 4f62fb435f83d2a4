import Foundation
import PkgKitSupport

/// The process's file creation mask (umask), read without changing it: `umask(2)` can only be read
/// by setting it, which would race with every thread creating files meanwhile. Linux shows it in
/// `/proc/self/status` (since 4.7); elsewhere it is not known, and callers set modes themselves.
enum FileCreationMask {
    /// The mask now; nil when it cannot be read.
    static func current() -> mode_t? {
        #if os(Linux)
        // Read with plain calls into a bounded buffer: the file is small, and this runs on every
        // install's writing threads.
        let fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 8192)
        let count = bytes.withUnsafeMutableBytes { readFully(fd, $0, at: 0) }
        guard count > 0 else { return nil }
        let key = Array("\nUmask:".utf8)
        let text = bytes[..<count]
        guard let start = text.firstRange(of: key)?.upperBound else { return nil }
        var mask: mode_t = 0, digits = 0
        for byte in text[start...] {
            if byte == UInt8(ascii: "\t") || byte == UInt8(ascii: " ") { if digits == 0 { continue } else { break } }
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "7"), digits < 6 else { break }
            mask = mask << 3 | mode_t(byte - UInt8(ascii: "0"))
            digits += 1
        }
        return digits > 0 ? mask : nil
        #else
        return nil
        #endif
    }

    /// Whether a file created with `mode` gets exactly `mode` under `mask`: the mask clears none
    /// of its bits. Never when the mask is unknown (nil).
    static func keeps(_ mode: mode_t, under mask: mode_t?) -> Bool {
        guard let mask else { return false }
        return mask & mode == 0
    }
}
