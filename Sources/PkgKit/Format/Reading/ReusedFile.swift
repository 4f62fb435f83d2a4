/// A file of the package being installed whose bytes are already on disk in an installed version
/// of the same product, hashed and found equal to the package's checksum: a delta update links
/// (or copies) it from there instead of downloading it again.
struct ReusedFile: Sendable {
    /// The installed version folder it is in (a name inside the product folder).
    var version: String
    /// Its path below that folder.
    var relativePath: String
    /// Who it was when it was hashed: it is used only if it is still that file.
    var identity: FileIdentity
    /// Its sha1, equal to the package's `extracted-checksum`.
    var sha1: SHA1Value
    /// What its first bytes are (executable detection without reading it again).
    var executable: ExecutableFormat?

    /// Its size.
    var size: Int64 { identity.size }
}
