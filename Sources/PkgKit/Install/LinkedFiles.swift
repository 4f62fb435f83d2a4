import Foundation
import PkgKitFormat

/// The installed files one install has hard-linked, each as the plan knew it and as it is after
/// the link. A link changes a file's change time, and a file that the new version holds at two
/// paths (two files with the same bytes) is reused twice: the second time it must still count
/// as the file the plan hashed. Shared by the writers of one staging folder; a file is checked,
/// linked and recorded under the lock, so no writer sees it between the link and the record.
// Unchecked: `identities` is touched only with `lock` held.
package final class LinkedFiles: @unchecked Sendable {
    private let lock = NSLock()
    private var identities: [FileIdentity: FileIdentity] = [:]

    package init() {}

    /// Runs `body` with the record, under the lock.
    package func withLock<T>(_ body: (inout [FileIdentity: FileIdentity]) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&identities)
    }
}
