import PkgKitFormat

/// What is known of a file whose data the reader withholds (`ArchiveEntry.dataWithheld`) because
/// the caller has its bytes already, found equal to the package's checksum for it: the scanner
/// describes the entry from this instead of reading it.
package struct SuppliedFile: Sendable {
    /// Its size in bytes.
    package var size: Int64
    /// The sha1 of its bytes, the package's `extracted-checksum` for it.
    package var sha1: SHA1Value
    /// Machine code or script found in its first bytes.
    package var executable: ExecutableFormat?

    package init(size: Int64, sha1: SHA1Value, executable: ExecutableFormat?) {
        self.size = size
        self.sha1 = sha1
        self.executable = executable
    }
}
