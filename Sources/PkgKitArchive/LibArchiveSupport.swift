import PkgKit

/// What libarchive adds to PkgKit for tools on Linux and macOS: zip, tar and flat installer
/// packages, xar packages with other encodings or checksum styles, and the zip writer.
///
/// Register it once, before reading packages: `LibArchiveSupport.register()`.
public struct LibArchiveSupport: ArchiveSupport {
    public let name = "PkgKitArchive (libarchive)"

    /// Makes a fresh support value.
    public init() {}

    /// Registers libarchive's readers and the zip writer with PkgKit for this process.
    public static func register() {
        ArchiveSupportRegistry.register(LibArchiveSupport())
    }

    public func openArchive(at path: String, container: ContainerSignature) throws -> any PackageReader {
        try LibArchiveReader(path: path)
    }

    public func openInstallerPackage(outer: any PackageReader, first: ArchiveEntry) throws -> any PackageReader {
        FlatPackageReader(outer: outer, current: first)
    }

    public func writeZip(_ items: [SourceItem], options: WriteOptions,
                         write: (UnsafeRawBufferPointer) throws -> Void,
                         progress: ((Int64) -> Void)?) throws -> [WrittenFile] {
        try ZipWriter(options: options).write(items, to: write, progress: progress)
    }
}
