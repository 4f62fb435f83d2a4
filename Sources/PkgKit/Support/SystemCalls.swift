import Foundation

/// The text of the current `errno`; a full disk's ends with what to do about it, since running
/// the same work again cannot help until space is freed.
package func errnoText() -> String {
    let code = errno
    let text = String(cString: strerror(code))
    return FreeSpace.isFullDisk(code) ? text + ": " + FreeSpace.fullDiskAdvice : text
}

extension Array where Element == UInt8 {
    /// Calls `body` with the bytes as a NUL-terminated C string.
    package func withCString<R>(_ body: (UnsafePointer<CChar>) throws -> R) rethrows -> R {
        try (self + [0]).withUnsafeBufferPointer { buffer in
            try buffer.withMemoryRebound(to: CChar.self) { try body($0.baseAddress!) }
        }
    }
}

/// Calls `transfer` with the bytes done so far until `total` are done or a call moves nothing
/// (the end of a file being read), resuming after short transfers and signals: the one loop of
/// the `…Fully` calls. Returns the bytes done, or -1 with `errno` set when the system refuses.
private func transferFully(_ total: Int, _ transfer: (_ done: Int) -> Int) -> Int {
    var done = 0
    while done < total {
        let count = transfer(done)
        if count < 0 {
            if errno == EINTR { continue }
            return -1
        }
        if count == 0 { break }
        done += count
    }
    return done
}

/// Reads at `offset` until `buffer` is full or the file ends, resuming after short reads and
/// signals. Returns the bytes read, or -1 with `errno` set when the system refuses.
package func readFully(_ descriptor: Int32, _ buffer: UnsafeMutableRawBufferPointer, at offset: Int64) -> Int {
    transferFully(buffer.count) { done in
        pread(descriptor, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
    }
}

/// Writes every byte of `bytes` to `descriptor`, resuming after short writes and signals.
/// Returns false with `errno` set when the system refuses (disk full, I/O error).
package func writeFully(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
    transferFully(bytes.count) { done in write(descriptor, bytes.baseAddress! + done, bytes.count - done) } == bytes.count
}

/// `read(2)` into `buffer`, resumed after a signal: the bytes read (0 at the end), or -1 with
/// `errno` set when the system refuses.
package func readRetrying(_ descriptor: Int32, _ buffer: UnsafeMutableRawBufferPointer) -> Int {
    while true {
        let count = read(descriptor, buffer.baseAddress, buffer.count)
        if count >= 0 || errno != EINTR { return count }
    }
}

/// Writes every byte of `bytes` at `offset` (`pwrite(2)`), resuming after short writes and
/// signals. Returns false with `errno` set when the system refuses.
package func writeFully(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int64) -> Bool {
    transferFully(bytes.count) { done in
        pwrite(descriptor, bytes.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
    } == bytes.count
}
