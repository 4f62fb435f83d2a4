import Foundation
import PkgKitSupport
import PkgKitFormat

/// The installed files one install hard-links, shared by the writers of one staging folder. A link
/// changes a file's change time, and a file that the new version holds at two paths (two files
/// with the same bytes) is reused twice: the second time it must still count as the file the plan
/// hashed. Such a file is checked, linked and recorded under the lock, so no writer sees it
/// between the link and the record. A file reused at one path only is met by one writer, once:
/// it is checked and linked without the lock, so that the writers link side by side.
package final class LinkedFiles: Sendable {
    /// The inodes of installed files that stand in for more than one path of the new version
    /// (an inode of another device counts too: it only takes the lock without need).
    private let shared: Set<UInt64>
    /// Each shared file as the plan knew it, and as it is after this install's last link of it.
    let relinked = LockedValue<[FileIdentity: FileIdentity]>([:])

    /// The bookkeeping for an install that reuses `reused`.
    init(reused: some Collection<InstalledFile>) {
        var seen = Set<UInt64>(minimumCapacity: reused.count), shared = Set<UInt64>()
        for file in reused where !seen.insert(file.identity.inode).inserted { shared.insert(file.identity.inode) }
        self.shared = shared
    }

    /// Whether the installed file known as `identity` may stand in for more than one path.
    func isShared(_ identity: FileIdentity) -> Bool { shared.contains(identity.inode) }
}
