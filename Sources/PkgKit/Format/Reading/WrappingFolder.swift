/// One wrapping folder (SPEC section 1): when an archive's (or a Payload's) root holds exactly
/// one folder and nothing else, and that folder holds `ContentInfo.plist`, that folder is the
/// package root. A zip made by Finder or `zip -r` of a content folder, or an installer Payload
/// that wraps the content in a folder named after the Xcode target, then reads like the bare
/// layout, in every reader at once: the opener hands the scanner an `UnwrappingReader`.
enum WrappingFolder {
    /// The folder `first` (a package's first entry) may be the wrapper of, or nil when the first
    /// entry already rules one out (ContentInfo.plist, Contents, a file at the root, an unsafe name).
    static func candidate(startingWith first: ArchiveEntry) -> [UInt8]? {
        guard let top = first.path.components.first.map(Array.init), !top.isEmpty,
              top != Array(ContentInfo.fileName.utf8), top != Array("Contents".utf8),
              top != [UInt8(ascii: ".")], top != [UInt8(ascii: "."), UInt8(ascii: ".")],
              PathSafety.problem(with: top) == nil else { return nil }
        // A single-component entry is the folder itself, or a file beside it.
        if first.path.bytes.count == top.count && first.kind != .directory { return nil }
        return top
    }

    /// True when every entry `listing` yields lies in `folder` and `folder/ContentInfo.plist` is
    /// a file. Only headers are read. A read failure ends the listing: what was seen decides, and
    /// the package's own pass reports the failure.
    static func wraps(_ folder: [UInt8], listing: any PackageReader) -> Bool {
        var holdsContentInfo = false
        while let entry = try? listing.nextEntry() {
            if entry.path.isRoot { continue }
            guard let inner = entry.path.inside(folder) else { return false }
            if inner.string == ContentInfo.fileName && entry.kind == .file { holdsContentInfo = true }
        }
        return holdsContentInfo
    }

    /// `reader` read from its wrapping folder when it has one, with the folder's name; else
    /// `reader` itself. `reopen` gives a fresh reader of the same package, for the listing pass
    /// that confirms a wrapper: it is needed only when the first entry is a folder other than
    /// Contents, so a bare package costs nothing more.
    static func unwrap(_ reader: any PackageReader, reopen: () throws -> any PackageReader) -> (reader: any PackageReader, wrapper: String?) {
        let first: ArchiveEntry
        do {
            guard let entry = try reader.nextEntry() else { return (reader, nil) }
            first = entry
        } catch let error as ReadError {
            return (PeekedReader(reader, failure: error), nil)
        } catch {
            return (reader, nil)
        }
        let peeked = PeekedReader(reader, first: first)
        guard let folder = candidate(startingWith: first),
              let listing = try? reopen(), wraps(folder, listing: listing) else { return (peeked, nil) }
        return (UnwrappingReader(peeked, folder: folder), String(decoding: folder, as: UTF8.self))
    }
}

/// A reader whose every entry lies in one wrapping folder, handed on with that folder taken off
/// the front of each path (the folder itself becomes the root), so that rules, reports and the
/// installer see the bare layout and paths relative to the package root.
final class UnwrappingReader: PackageReader {
    private let inner: any PackageReader
    private let folder: [UInt8]
    /// The folder as paths in read errors show it, with the slash after it.
    private let shownPrefix: String

    init(_ inner: any PackageReader, folder: [UInt8]) {
        self.inner = inner
        self.folder = folder
        shownPrefix = ArchivePath(raw: folder).description + "/"
    }

    var format: PackageFormat { inner.format }
    var progress: (done: Int64, total: Int64) { inner.progress }
    var expectedEntryCount: Int? { inner.expectedEntryCount }
    var declaredSHA1: String? { inner.declaredSHA1 }

    func nextEntry() throws -> ArchiveEntry? {
        guard var entry = try relative({ try inner.nextEntry() }) else { return nil }
        // Confirmed by the listing pass; an entry that changed since keeps its own path.
        if let path = entry.path.inside(folder) { entry.path = path }
        if let target = entry.hardlinkTarget?.inside(folder) { entry.hardlinkTarget = target }
        return entry
    }

    func readData(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        try relative { try inner.readData(into: buffer) }
    }

    /// Runs `body`, giving the paths of its read errors relative to the package root.
    private func relative<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as ReadError {
            switch error {
            case .unreadable(let path, let message): throw ReadError.unreadable(path: strip(path), message)
            case .checksumMismatch(let path, let message): throw ReadError.checksumMismatch(path: strip(path), message)
            case .duplicateEntry(let path, let message): throw ReadError.duplicateEntry(path: strip(path), message)
            case .io: throw error
            }
        }
    }

    private func strip(_ path: String?) -> String? {
        guard let path, path.hasPrefix(shownPrefix) else { return path }
        return String(path.dropFirst(shownPrefix.count))
    }
}

extension ArchivePath {
    /// This path relative to `folder` (a first component): the root for the folder itself, nil
    /// when the path does not lie in it.
    func inside(_ folder: [UInt8]) -> ArchivePath? {
        guard bytes.starts(with: folder) else { return nil }
        if bytes.count == folder.count { return ArchivePath(raw: []) }
        guard bytes[folder.count] == UInt8(ascii: "/") else { return nil }
        return ArchivePath(raw: Array(bytes[(folder.count + 1)...]))
    }
}
