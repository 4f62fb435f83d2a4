import Foundation
import PkgKitDiagnostics

/// One wrapping folder (docs/format.md): when an archive's (or a Payload's) root holds exactly
/// one folder and nothing else, and that folder holds `ContentInfo.plist`, that folder is the
/// package root. A zip made by Finder or `zip -r` of a content folder, or an installer Payload
/// that wraps the content in a folder named after the Xcode target, then reads like the bare
/// layout, in every reader at once: the opener hands the scanner an `UnwrappingReader`.
///
/// Finder's "Compress" also puts a top-level `__MACOSX/` of AppleDouble (`._*`) files beside the
/// folder: it does not count against the one folder, and the unwrapped package shows it as one
/// `__MACOSX` folder entry, with nothing inside (one `junk-file` warning; nothing extracted).
package enum WrappingFolder {
    /// The folder of AppleDouble files Finder adds beside what it compresses.
    static let appleDoubleFolder = Array("__MACOSX".utf8)

    /// True when `first` (a package's first entry) leaves a wrapping folder possible: it lies in
    /// a folder other than ContentInfo.plist, Contents or an unsafe name (or in `__MACOSX/`).
    static func mayBeWrapped(startingWith first: ArchiveEntry) -> Bool {
        guard let top = first.path.components.first.map(Array.init) else { return false }
        if top == appleDoubleFolder { return true }
        // A single-component entry is the folder itself, or a file beside it.
        if first.path.bytes.count == top.count && first.kind != .directory { return false }
        return isCandidate(top)
    }

    /// The wrapping folder of the package `listing` yields: the one top-level folder (besides
    /// `__MACOSX`) that every entry lies in, when it holds `ContentInfo.plist` as a file; nil
    /// otherwise. Only headers are read. A read failure ends the listing: what was seen decides,
    /// and the package's own pass reports the failure.
    package static func wrapper(listing: any PackageReader) -> [UInt8]? {
        var folder: [UInt8]?
        var holdsContentInfo = false
        while let entry = try? listing.nextEntry() {
            if entry.path.isRoot { continue }
            if entry.path.inside(appleDoubleFolder) != nil { continue }
            guard let top = entry.path.components.first.map(Array.init) else { return nil }
            if folder == nil {
                guard isCandidate(top), entry.path.bytes.count > top.count || entry.kind == .directory else { return nil }
                folder = top
            }
            guard let folder, let inner = entry.path.inside(folder) else { return nil }
            if inner.string == ContentInfo.fileName && entry.kind == .file { holdsContentInfo = true }
        }
        return holdsContentInfo ? folder : nil
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
        guard mayBeWrapped(startingWith: first), let listing = try? reopen(), let folder = wrapper(listing: listing) else {
            return (peeked, nil)
        }
        return (UnwrappingReader(peeked, folder: folder), String(decoding: folder, as: UTF8.self))
    }

    /// The name of the wrapping folder of the folder at `path`: its one entry (besides
    /// `__MACOSX`) when that is a folder holding `ContentInfo.plist` as a file, as unzipping a
    /// Finder zip leaves it; nil otherwise. Links are not followed.
    public static func wrapper(ofFolder path: String) -> String? {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else { return nil }
        let others = names.filter { Array($0.utf8) != appleDoubleFolder }
        guard others.count == 1, let name = others.first, isCandidate(Array(name.utf8)) else { return nil }
        var folder = stat(), plist = stat()
        guard lstat(path + "/" + name, &folder) == 0, folder.st_mode & S_IFMT == S_IFDIR,
              lstat(path + "/" + name + "/" + ContentInfo.fileName, &plist) == 0, plist.st_mode & S_IFMT == S_IFREG else { return nil }
        return name
    }

    /// `diagnostics` of a package wrapped in `wrapper`, each entry's place in the archive added
    /// (`archivePath`), so that a user can find it there. Finder's `__MACOSX` lies beside the
    /// wrapper, not in it; failures to read or write a file name no entry.
    public static func withArchivePaths(_ diagnostics: [Diagnostic], wrapper: String) -> [Diagnostic] {
        diagnostics.map { diagnostic in
            guard let path = diagnostic.path, diagnostic.code != .unreadableInput, diagnostic.code != .ioError,
                  path != "__MACOSX", !path.hasPrefix("__MACOSX/") else { return diagnostic }
            var placed = diagnostic
            placed.archivePath = wrapper + "/" + path
            return placed
        }
    }

    /// True when a top-level name may be a wrapping folder's.
    private static func isCandidate(_ top: [UInt8]) -> Bool {
        !top.isEmpty && top != Array(ContentInfo.fileName.utf8) && top != Array("Contents".utf8)
            && top != [UInt8(ascii: ".")] && top != [UInt8(ascii: "."), UInt8(ascii: ".")] && top != appleDoubleFolder
            && PathSafety.problem(with: top) == nil
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
    /// Whether the `__MACOSX` folder entry was handed out already.
    private var showedAppleDouble = false

    package init(_ inner: any PackageReader, folder: [UInt8]) {
        self.inner = inner
        self.folder = folder
        shownPrefix = ArchivePath(raw: folder).description + "/"
    }

    package var format: PackageFormat { inner.format }
    package var progress: (done: Int64, total: Int64) { inner.progress }
    package var expectedEntryCount: Int? { inner.expectedEntryCount }
    package var declaredSHA1: String? { inner.declaredSHA1 }

    package func nextEntry() throws -> ArchiveEntry? {
        while var entry = try relative({ try inner.nextEntry() }) {
            if entry.path.inside(WrappingFolder.appleDoubleFolder) != nil {
                // Finder's AppleDouble files: one folder entry stands for them all.
                guard !showedAppleDouble else { continue }
                showedAppleDouble = true
                return ArchiveEntry(path: ArchivePath(raw: WrappingFolder.appleDoubleFolder), kind: .directory, mode: 0o755)
            }
            // Confirmed by the listing pass; an entry that changed since keeps its own path.
            if let path = entry.path.inside(folder) { entry.path = path }
            if let target = entry.hardlinkTarget?.inside(folder) { entry.hardlinkTarget = target }
            return entry
        }
        return nil
    }

    package func readData(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
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
    package func inside(_ folder: [UInt8]) -> ArchivePath? {
        guard bytes.starts(with: folder) else { return nil }
        if bytes.count == folder.count { return ArchivePath(raw: []) }
        guard bytes[folder.count] == UInt8(ascii: "/") else { return nil }
        return ArchivePath(raw: Array(bytes[(folder.count + 1)...]))
    }
}
