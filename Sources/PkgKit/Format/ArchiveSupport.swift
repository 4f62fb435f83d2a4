import Foundation
import PkgKitSupport

/// What a library adds to the containers PkgKit reads and writes itself.
///
/// The core reads xar packages with its own reader (zlib or stored data; sha1, md5 or no
/// checksums; files, folders and symbolic links) and unpacked folders, and writes xar. Zip, tar,
/// flat installer packages, other xar encodings and the zip writer need libarchive, which an iOS
/// app cannot link: `PkgKitArchive` provides them through this protocol. A tool registers its
/// support once, at start-up, with ``ArchiveSupportRegistry/register(_:)``; the core's package
/// opener asks it only for what it does not recognise itself.
public protocol ArchiveSupport: Sendable {
    /// A short name for messages, e.g. `PkgKitArchive (libarchive)`.
    var name: String { get }

    /// Opens the archive at `path`, which the core recognised as `container` by its signature
    /// but does not read itself. Throws `ReadError.unreadable` for an archive it cannot read.
    func openArchive(at path: String, container: ContainerSignature) throws -> any PackageReader

    /// Reads on from a flat installer package whose outer xar is `outer`, positioned just after
    /// its first member `first`: the entries of the component `Payload`, whose root is the
    /// package root.
    func openInstallerPackage(outer: any PackageReader, first: ArchiveEntry) throws -> any PackageReader

    /// Writes `items` as a zip, handing every byte of the archive to `write` in order, and
    /// reports each file's facts. `progress` receives the payload bytes done so far.
    func writeZip(_ items: [SourceItem], options: WriteOptions,
                  write: (UnsafeRawBufferPointer) throws -> Void,
                  progress: ((Int64) -> Void)?) throws -> [WrittenFile]
}

/// The process-wide ``ArchiveSupport``: none in an app that links the core alone.
public enum ArchiveSupportRegistry {
    // A lock, not an actor: the opener runs in synchronous code on any thread.
    private static let registered = LockedValue<(any ArchiveSupport)?>(nil)

    /// Makes `support` the one the package opener and `create --format zip` use.
    public static func register(_ support: any ArchiveSupport) {
        registered.withLock { $0 = support }
    }

    /// The registered support, if any.
    public static var current: (any ArchiveSupport)? {
        registered.withLock { $0 }
    }

    /// Says which container needs what the core lacks, for `unreadable-archive` messages.
    package static func missing(_ what: String) -> String {
        "\(what): PkgKit alone reads xar packages and unpacked folders; PkgKitArchive reads this (link it and call LibArchiveSupport.register())"
    }
}
