import PkgKitFormat
import PkgKitChecking

/// A regular file of an installed version, hashed: what an installed tree is made of, and what a
/// delta update takes instead of downloading a file again (the installed file whose sha1 is the
/// package's checksum for it, or a file rebuilt from chunks in a scratch folder beside the versions).
/// Given to an install (`InstallOptions.reused`), it stands in for the package's file: the reader
/// withholds that file's data and the staging writer links or copies this one.
package struct InstalledFile: Sendable {
    /// The folder it is in, a name inside the product folder: an installed version's (or the
    /// scratch folder of files rebuilt from chunks).
    package var version: String
    /// Its path below that folder.
    package var relativePath: String
    /// Who it was when it was hashed: it stands in for a package's file only while it is still that file.
    package var identity: FileIdentity
    /// The sha1 of its bytes.
    package var sha1: SHA1Value
    /// Machine code or script found in its first bytes.
    package var executable: ExecutableFormat?

    package init(version: String, relativePath: String, identity: FileIdentity, sha1: SHA1Value, executable: ExecutableFormat? = nil) {
        self.version = version
        self.relativePath = relativePath
        self.identity = identity
        self.sha1 = sha1
        self.executable = executable
    }

    /// Its size.
    package var size: Int64 { identity.size }

    /// What the scanner needs to know of it in place of the package's data.
    package var supplied: SuppliedFile { SuppliedFile(size: size, sha1: sha1, executable: executable) }
}
