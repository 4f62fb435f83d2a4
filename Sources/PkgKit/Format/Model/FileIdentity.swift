import Foundation

/// Who a file is on disk, to check that a file hashed earlier is still the same one: its device
/// and inode, mode, size, and modification and change times in nanoseconds (a write always moves
/// the change time, which no one can set back).
package struct FileIdentity: Hashable, Sendable {
    package var device: UInt64
    package var inode: UInt64
    package var mode: UInt32
    package var size: Int64
    package var modified: Int64
    package var changed: Int64

    /// These values (a stat cache's record of a file).
    package init(device: UInt64, inode: UInt64, mode: UInt32, size: Int64, modified: Int64, changed: Int64) {
        (self.device, self.inode, self.mode, self.size, self.modified, self.changed) = (device, inode, mode, size, modified, changed)
    }

    /// Who the file `info` describes is.
    package init(_ info: stat) {
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        mode = UInt32(info.st_mode)
        size = Int64(info.st_size)
        #if canImport(Darwin)
        modified = Int64(info.st_mtimespec.tv_sec) * 1_000_000_000 + Int64(info.st_mtimespec.tv_nsec)
        changed = Int64(info.st_ctimespec.tv_sec) * 1_000_000_000 + Int64(info.st_ctimespec.tv_nsec)
        #else
        modified = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        changed = Int64(info.st_ctim.tv_sec) * 1_000_000_000 + Int64(info.st_ctim.tv_nsec)
        #endif
    }
}
