import Foundation

/// Keeps installed content out of the device's backups, the seam between PkgKit and the
/// platform: Apple's data storage guidelines want content that can be downloaded again kept out
/// of iCloud backups (an app that backs it up is rejected). On Apple platforms it sets the item's
/// `isExcludedFromBackup` (`AppleBackupExclusion.swift`); elsewhere no backup reads such a mark,
/// and it does nothing. A test puts its own in, to see what is marked.
///
/// What is marked, when `excludeFromBackup` says so (the default): each version's staged folder,
/// right before it goes into place, so that no version is ever in place unmarked (the mark is
/// the folder's own and moves with it); and a sync's download in progress (`.download-*.part`),
/// which may wait for days to be resumed. The record and the lock stay in backups: a few bytes.
package struct BackupExclusion: Sendable {
    /// Marks the folder or file at the path given as not to be backed up.
    package var exclude: @Sendable (_ path: String) throws -> Void

    /// A backup exclusion that marks items with `exclude`.
    package init(exclude: @escaping @Sendable (_ path: String) throws -> Void) {
        self.exclude = exclude
    }

    /// The platform's own.
    package static var platform: BackupExclusion {
        #if canImport(Darwin)
        apple
        #else
        BackupExclusion { _ in }
        #endif
    }

    /// Marks `path` when `excluded`. An item that cannot be marked is kept all the same: it is
    /// then backed up, which costs room in the backup, never content.
    package func mark(_ path: String, when excluded: Bool) {
        guard excluded else { return }
        try? exclude(path)
    }
}
