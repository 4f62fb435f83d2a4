import PkgKitSupport

/// A file of a package whose bytes are already on disk outside the package, found equal to the
/// package's checksum for it. A reader hands its entry on with it (`ArchiveEntry.onHand`) and
/// delivers no data; whoever describes the entry takes its size, sha1 and first bytes from here,
/// and whoever writes it takes the bytes from the file on disk.
package protocol FileOnHand: Sendable {
    /// The folder it is in: a name inside the folder that whoever writes the entry takes files from.
    var folder: String { get }
    /// Its path below `folder`.
    var relativePath: String { get }
    /// Who it was when its bytes were found equal: it stands in for the entry only while it is
    /// still that file.
    var identity: FileIdentity { get }
    /// The sha1 of its bytes, equal to the package's `extracted-checksum`.
    var sha1: SHA1Value { get }
    /// What its first bytes are (executable detection without reading it again).
    var executable: ExecutableFormat? { get }
}

extension FileOnHand {
    /// Its size.
    package var size: Int64 { identity.size }
}
