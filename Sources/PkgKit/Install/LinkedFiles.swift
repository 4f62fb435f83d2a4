import Foundation
import PkgKitSupport
import PkgKitFormat

/// The installed files one install has hard-linked, each as the plan knew it and as it is after
/// the link. A link changes a file's change time, and a file that the new version holds at two
/// paths (two files with the same bytes) is reused twice: the second time it must still count
/// as the file the plan hashed. Shared by the writers of one staging folder; a file is checked,
/// linked and recorded under the lock, so no writer sees it between the link and the record.
package typealias LinkedFiles = LockedValue<[FileIdentity: FileIdentity]>

extension LockedValue where Value == [FileIdentity: FileIdentity] {
    /// No file linked yet.
    package convenience init() { self.init([:]) }
}
