/// A regular file of an installed version, hashed: what an installed tree is made of, and what a
/// delta update takes instead of downloading a file again (the installed file whose sha1 is the
/// package's checksum for it, or a file rebuilt from chunks in a scratch folder beside the versions).
/// As a `FileOnHand` it stands in for the package's file: the staging writer links or copies it.
struct InstalledFile: FileOnHand {
    /// The folder it is in, a name inside the product folder: an installed version's (or the
    /// scratch folder of files rebuilt from chunks).
    var version: String
    /// Its path below that folder.
    var relativePath: String
    /// Who it was when it was hashed: it stands in for a package's file only while it is still that file.
    var identity: FileIdentity
    /// The sha1 of its bytes.
    var sha1: SHA1Value
    /// Machine code or script found in its first bytes.
    var executable: ExecutableFormat?

    /// Its folder, named inside the product folder.
    var folder: String { version }
}
