#if os(Linux)
internal import CSyscalls
#endif

/// How much of a file being written, front to back, has been handed to the disk. Handing it over
/// in steps while writing (`sync_file_range`, not waiting) lets the disk work while the process
/// goes on, so the final `fsync` or `syncfs` finds most of the data written already instead of
/// starting the whole write-back after the last byte. Elsewhere than Linux it does nothing.
package struct DiskWriteback {
    /// Bytes handed over at once while a file is written.
    package static let step: Int64 = 8 << 20

    /// Bytes already handed to the disk.
    package private(set) var handed: Int64 = 0

    package init() {}

    /// Starts writing bytes `handed..<written` of `descriptor` to the disk when at least
    /// `minimum` of them wait.
    package mutating func start(_ descriptor: Int32, written: Int64, minimum: Int64 = step) {
        guard written > handed, written - handed >= minimum else { return }
        #if os(Linux)
        _ = CSyscalls_startWriteback(descriptor, handed, written - handed)
        #endif
        handed = written
    }
}
