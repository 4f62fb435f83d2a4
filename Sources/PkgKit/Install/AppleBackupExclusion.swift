// Apple platforms only: Linux has no backup that reads this mark. Not built or run here: it
// builds on Apple platforms only, and has not yet been run on a device.
#if canImport(Darwin)
import Foundation

extension BackupExclusion {
    /// The item's `isExcludedFromBackup` resource value, which iCloud and computer backups of a
    /// device (and Time Machine on a Mac) honour for a folder and everything below it.
    static let apple = BackupExclusion { path in
        var url = URL(fileURLWithPath: path)
        var values = URLResourceValues()
        values.isExcludedFromBackup = true
        try url.setResourceValues(values)
    }
}
#endif
