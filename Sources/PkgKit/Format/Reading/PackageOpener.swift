import Foundation
import PkgKitSupport
import PkgKitDiagnostics

/// Opens any package pkgtool reads, choosing the reader from the content, not the name.
public enum PackageOpener {
    /// An opened package and what is known before reading it.
    public struct Opened {
        /// The reader to stream entries from.
        public var reader: any PackageReader
        /// Facts known before the first entry: name and size of an archive file.
        public var facts: PackageFacts

        package init(reader: any PackageReader, facts: PackageFacts) {
            self.reader = reader
            self.facts = facts
        }
    }

    /// Opens the folder or archive file at `path`. Missing or unreadable input throws
    /// `ReadError.io`; a file that is no package (or one only `ArchiveSupport` reads, when none is
    /// registered) is returned with an `unreadable-archive` failure. A package wrapped in one
    /// folder (docs/format.md) is read from that folder, named in `facts.wrapper`.
    public static func open(_ path: String, limits: PackageLimits = PackageLimits()) throws -> Opened {
        try open(path, limits: limits, memo: nil)
    }

    /// `open`, handing a xar's table of contents to and from `memo` (see `XarTableMemo`).
    package static func open(_ path: String, limits: PackageLimits, memo: XarTableMemo?) throws -> Opened {
        var opened = try openBare(path, limits: limits, memo: memo)
        let bare = opened.reader
        guard !(bare is EmptyReader) else { return opened }
        (opened.reader, opened.facts.wrapper) = WrappingFolder.unwrap(bare) {
            if let folder = bare as? FolderReader { return folder.rewound() }
            return try openBare(path, limits: limits, memo: nil).reader
        }
        return opened
    }

    /// `open` without looking for a wrapping folder.
    private static func openBare(_ path: String, limits: PackageLimits, memo: XarTableMemo?) throws -> Opened {
        var info = stat()
        guard stat(path, &info) == 0 else { throw ReadError.io(path: path, errnoText()) }
        if info.st_mode & S_IFMT == S_IFDIR {
            return Opened(reader: try FolderReader(root: path, limits: limits), facts: PackageFacts())
        }
        return try openArchive(PackageFile(path: path), path: path, name: String(path.split(separator: "/").last ?? Substring(path)),
                               limits: limits, memo: memo, support: Support(registered: ArchiveSupportRegistry.current, whole: true))
    }

    /// Opens the archive whose bytes are `bytes` (a file, or bytes still arriving), named
    /// `path` in messages and `name` in reports; a package wrapped in one folder is read from that
    /// folder. What pkgtool's own xar reader does not read, `ArchiveSupport` reads from the file at
    /// `path`, which must then be whole: for bytes still arriving (`whole` false) such an archive
    /// throws `NeedsWholeFile` instead, to be opened again once it is complete.
    package static func open(_ bytes: PackageBytes, path: String, name: String, limits: PackageLimits, memo: XarTableMemo?,
                     whole: Bool) throws -> Opened {
        let support = Support(registered: ArchiveSupportRegistry.current, whole: whole)
        var opened = try openArchive(bytes, path: path, name: name, limits: limits, memo: memo, support: support)
        let bare = opened.reader
        guard !(bare is EmptyReader) else { return opened }
        (opened.reader, opened.facts.wrapper) = WrappingFolder.unwrap(bare) {
            try openArchive(bytes, path: path, name: name, limits: limits, memo: nil, support: support).reader
        }
        return opened
    }

    /// Thrown for a package only `ArchiveSupport` reads whose file is not whole: bytes still
    /// arriving (`open(_:…whole: false)`), or a copy that holds only some of them.
    package struct NeedsWholeFile: Error {
        /// What kind of archive it is.
        package var reason: String
    }

    /// The registered `ArchiveSupport`, and whether the file it would read is whole.
    private struct Support {
        var registered: (any ArchiveSupport)?
        var whole: Bool

        /// The support to read `what` with: nil when none is registered; throws `NeedsWholeFile`
        /// when the file is not whole yet.
        func forReading(_ what: String) throws -> (any ArchiveSupport)? {
            guard whole else { throw NeedsWholeFile(reason: what) }
            return registered
        }
    }

    /// An archive, chosen by its first bytes.
    private static func openArchive(_ bytes: PackageBytes, path: String, name: String, limits: PackageLimits, memo: XarTableMemo?,
                                    support: Support) throws -> Opened {
        var facts = PackageFacts()
        facts.archiveName = name
        facts.archiveBytes = bytes.size
        var headBuffer = [UInt8](repeating: 0, count: ContainerSignature.headBytes)
        let count = try headBuffer.withUnsafeMutableBytes { try bytes.read(into: $0, at: 0, path: path) }
        let head = Array(headBuffer[0 ..< count])
        func unreadable(_ message: String, format: PackageFormat? = nil) -> Opened {
            facts.format = format
            facts.readFailures.append(Diagnostic(.unreadableArchive, path: nil, message))
            return Opened(reader: EmptyReader(), facts: facts)
        }
        if head.isEmpty { return unreadable("the file is empty: it is not a package") }
        guard let container = ContainerSignature.detect(head) else {
            return unreadable("not a package: the file starts with no xar, zip or tar signature")
        }
        do {
            if container == .xar {
                if let problem = xarTruncation(head: head, fileSize: bytes.size) { return unreadable(problem, format: .xar) }
                switch try XarReader.open(bytes, path: path, limits: limits, memo: memo) {
                case .reader(let native):
                    return try openXar(native, facts: facts, support: support)
                case .needsArchiveSupport(let reason):
                    guard let library = try support.forReading(reason) else { return unreadable(ArchiveSupportRegistry.missing(reason)) }
                    return try openXar(try library.openArchive(at: path, container: .xar), facts: facts, support: support)
                }
            }
            let what = "a \(container.rawValue) archive"
            guard let library = try support.forReading(what) else {
                return unreadable(ArchiveSupportRegistry.missing(what), format: container == .zip ? .zip : container == .tar ? .tar : nil)
            }
            if container == .zip, let problem = ContainerExtent.zipProblem(path) { return unreadable(problem, format: .zip) }
            return Opened(reader: try library.openArchive(at: path, container: container), facts: facts)
        } catch let ReadError.unreadable(_, message) {
            return unreadable(message)
        }
    }

    /// A xar is a content package or an installer package; its first member tells which.
    private static func openXar(_ reader: any PackageReader, facts: PackageFacts, support: Support) throws -> Opened {
        var facts = facts
        do {
            guard let first = try reader.nextEntry() else { return Opened(reader: reader, facts: facts) }
            if InstallerPackageLayout.startsInstallerPackage(first.path) {
                facts.format = .flatPackage
                guard let library = try support.forReading("a flat installer package") else {
                    facts.readFailures.append(Diagnostic(.unreadableArchive, path: nil, ArchiveSupportRegistry.missing("a flat installer package")))
                    return Opened(reader: EmptyReader(), facts: facts)
                }
                return Opened(reader: try library.openInstallerPackage(outer: reader, first: first), facts: facts)
            }
            return Opened(reader: PeekedReader(reader, first: first), facts: facts)
        } catch let error as ReadError {
            if reader is XarReader { return Opened(reader: PeekedReader(reader, failure: error), facts: facts) }
            // libarchive, given a xar whose table of contents pkgtool's own reader could not read,
            // fails on it too, with a raw XML parser message and no format of its own yet: the
            // container is a xar (its signature says so), and damaged.
            if case .io = error { throw error }
            facts.format = .xar
            facts.readFailures.append(Diagnostic(error.code, path: error.diagnostic.path,
                "the package is damaged: its table of contents cannot be read (truncated or corrupt); make it again"))
            return Opened(reader: EmptyReader(), facts: facts)
        }
    }

    /// Why a xar whose first bytes are `head` cannot be whole in a file of `fileSize` bytes: the
    /// file ends inside the header or the table of contents the header declares, or the header
    /// declares a table of contents longer than any pkgtool reads; nil otherwise. The same words
    /// as `ContainerExtent`'s, so that every command describes a cut package alike.
    static func xarTruncation(head: [UInt8], fileSize: Int64) -> String? {
        guard head.count >= XarHeader.size else { return "the package is truncated: it ends inside its header" }
        let header: XarHeader
        do {
            header = try XarHeader.parse(head)
        } catch .limitPassed(let limit) {
            return XarTOCError.limitPassed(limit).description
        } catch {
            return nil
        }
        let needed = header.anchoredBytes.upperBound
        guard fileSize < needed else { return nil }
        return "the package is truncated: it ends inside its table of contents (\(fileSize) bytes; its header declares at least \(needed))"
    }
}

/// A reader with nothing in it, for input that could not be opened as any archive. Its format is
/// never reported: the facts keep what the opener knew (nil for no known container).
package final class EmptyReader: PackageReader {
    package let format: PackageFormat = .tar
    package func nextEntry() throws -> ArchiveEntry? { nil }
    package func readData(into buffer: UnsafeMutableRawBufferPointer) throws -> Int { 0 }
}

/// `open(2)` for reading, outside the readers whose own `open` would shadow it.
func openReadOnly(_ path: String) -> Int32 {
    open(path, O_RDONLY | O_CLOEXEC)
}
