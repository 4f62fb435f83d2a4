import Foundation

/// How many bytes the file system holding a folder can still take, as an unprivileged writer
/// sees it (`statvfs`'s `f_bavail`: blocks kept for root do not count). A seam: an install asks
/// it before writing, and a test gives it a figure of its own.
package struct FreeSpace: Sendable {
    /// The bytes free on the volume of `path`; nil when the system cannot say (the check is
    /// then not made: the writes themselves report a full disk).
    package var available: @Sendable (_ path: String) -> Int64?

    /// A free-space source answering with `available`.
    package init(_ available: @escaping @Sendable (_ path: String) -> Int64?) {
        self.available = available
    }

    /// The system's own figure, from `statvfs`.
    package static let system = FreeSpace { path in
        var info = statvfs()
        // A folder not made yet goes on the file system of the nearest one that is.
        var asked = path
        while statvfs(asked, &info) != 0 {
            let parent = (asked as NSString).deletingLastPathComponent
            let next = parent.isEmpty ? "." : parent
            guard errno == ENOENT, next != asked else { return nil }
            asked = next
        }
        let (bytes, overflow) = Int64(clamping: info.f_bavail).multipliedReportingOverflow(by: Int64(clamping: info.f_frsize))
        return overflow ? Int64.max : bytes
    }

    /// The advice a message about a full disk ends with.
    package static let fullDiskAdvice = "free space on the disk"

    /// True for the `errno` values of a full disk or an exhausted quota.
    static func isFullDisk(_ code: Int32) -> Bool { code == ENOSPC || code == EDQUOT }
}
