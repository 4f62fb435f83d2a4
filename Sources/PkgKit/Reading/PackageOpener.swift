#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Opens any package pkgtool reads, choosing the reader from the content, not the name.
public enum PackageOpener {
    /// An opened package and what is known before reading it.
    public struct Opened {
        /// The reader to stream entries from.
        public var reader: PackageReader
        /// Facts known before the first entry: name and size of an archive file.
        public var facts: PackageFacts
    }

    /// Opens the folder or archive file at `path`. Missing or unreadable input throws
    /// `ReadError.io`; an unrecognised file is returned with an `unreadable-archive` failure.
    public static func open(_ path: String, limits: PackageLimits = PackageLimits()) throws -> Opened {
        var info = stat()
        guard stat(path, &info) == 0 else { throw ReadError.io(path: path, errnoText()) }
        var facts = PackageFacts()
        if info.st_mode & S_IFMT == S_IFDIR {
            return Opened(reader: try FolderReader(root: path, limits: limits), facts: facts)
        }
        facts.archiveName = String(path.split(separator: "/").last ?? Substring(path))
        facts.archiveBytes = Int64(info.st_size)
        let fd = openReadOnly(path)
        guard fd >= 0 else { throw ReadError.io(path: path, errnoText()) }
        var magic = [UInt8](repeating: 0, count: 4)
        let count = read(fd, &magic, 4)
        close(fd)
        if count <= 0 {
            facts.readFailures.append(Diagnostic(.unreadableArchive, path: nil, "the file is empty: it is not a package"))
            return Opened(reader: EmptyReader(), facts: facts)
        }
        if magic == Array("xar!".utf8), let native = try XarReader.open(path: path, limits: limits) {
            return try openXar(native, facts: facts)
        }
        let reader: LibArchiveReader
        do {
            reader = try LibArchiveReader(path: path)
        } catch let ReadError.unreadable(_, message) {
            facts.readFailures.append(Diagnostic(.unreadableArchive, path: nil, message))
            return Opened(reader: EmptyReader(), facts: facts)
        }
        guard magic == Array("xar!".utf8) else { return Opened(reader: reader, facts: facts) }
        return try openXar(reader, facts: facts)
    }

    /// A xar is a content package or an installer package; its first member tells which.
    private static func openXar(_ reader: PackageReader, facts: PackageFacts) throws -> Opened {
        var facts = facts
        do {
            guard let first = try reader.nextEntry() else { return Opened(reader: reader, facts: facts) }
            if FlatPackageReader.startsInstallerPackage(first.path) {
                facts.format = .flatPackage
                return Opened(reader: FlatPackageReader(outer: reader, current: first), facts: facts)
            }
            return Opened(reader: PeekedReader(reader, first: first), facts: facts)
        } catch let error as ReadError {
            return Opened(reader: PeekedReader(reader, failure: error), facts: facts)
        }
    }
}

/// A reader with nothing in it, for input that could not be opened as any archive.
final class EmptyReader: PackageReader {
    let format: PackageFormat = .tar
    func nextEntry() throws -> ArchiveEntry? { nil }
    func readData(into buffer: UnsafeMutableRawBufferPointer) throws -> Int { 0 }
}

/// `open(2)` for reading, outside the readers whose own `open` would shadow it.
func openReadOnly(_ path: String) -> Int32 {
    open(path, O_RDONLY | O_CLOEXEC)
}
