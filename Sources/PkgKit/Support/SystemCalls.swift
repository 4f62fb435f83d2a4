import Foundation

/// The text of the current `errno`.
func errnoText() -> String { String(cString: strerror(errno)) }

extension Array where Element == UInt8 {
    /// Calls `body` with the bytes as a NUL-terminated C string.
    func withCString<R>(_ body: (UnsafePointer<CChar>) throws -> R) rethrows -> R {
        try (self + [0]).withUnsafeBufferPointer { buffer in
            try buffer.withMemoryRebound(to: CChar.self) { try body($0.baseAddress!) }
        }
    }
}

/// Reads at `offset` until `buffer` is full or the file ends, resuming after short reads and
/// signals. Returns the bytes read, or -1 with `errno` set when the system refuses.
func readFully(_ descriptor: Int32, _ buffer: UnsafeMutableRawBufferPointer, at offset: Int64) -> Int {
    var done = 0
    while done < buffer.count {
        let count = pread(descriptor, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
        if count < 0 {
            if errno == EINTR { continue }
            return -1
        }
        if count == 0 { break }
        done += count
    }
    return done
}

/// Writes every byte of `bytes` to `descriptor`, resuming after short writes and signals.
/// Returns false with `errno` set when the system refuses (disk full, I/O error).
func writeFully(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
    var offset = 0
    while offset < bytes.count {
        let written = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
        if written < 0 {
            if errno == EINTR { continue }
            return false
        }
        offset += written
    }
    return true
}

/// `read(2)` into `buffer`, resumed after a signal: the bytes read (0 at the end), or -1 with
/// `errno` set when the system refuses.
func readRetrying(_ descriptor: Int32, _ buffer: UnsafeMutableRawBufferPointer) -> Int {
    while true {
        let count = read(descriptor, buffer.baseAddress, buffer.count)
        if count >= 0 || errno != EINTR { return count }
    }
}

/// Writes every byte of `bytes` at `offset` (`pwrite(2)`), resuming after short writes and
/// signals. Returns false with `errno` set when the system refuses.
func writeFully(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int64) -> Bool {
    var done = 0
    while done < bytes.count {
        let count = pwrite(descriptor, bytes.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
        if count < 0 {
            if errno == EINTR { continue }
            return false
        }
        done += count
    }
    return true
}
