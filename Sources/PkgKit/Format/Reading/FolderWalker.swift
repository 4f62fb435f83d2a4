import Foundation
import PkgKitSupport

/// Lists a folder depth-first, each folder before its contents, siblings sorted bytewise,
/// never following a symbolic link. Names are kept as raw bytes so that a name that is not
/// valid UTF-8 reaches the rules instead of being silently changed.
public enum FolderWalker {
    /// The deepest folder nesting walked; deeper trees are refused rather than recursed into.
    public static let maxDepth = 256

    /// Lists everything below `root`, with package paths starting at `prefix` (empty for the root).
    public static func walk(root: [UInt8], prefix: [UInt8] = [], limits: PackageLimits = PackageLimits()) throws -> [SourceItem] {
        var items: [SourceItem] = []
        try walk(root: root, prefix: prefix, limits: limits) { items += $0 }
        return items
    }

    /// Lists everything below `root` as `walk(root:prefix:limits:)` does, but hands the items to
    /// `found` as the walk goes, in their order, a few hundred at a time, and keeps none: whoever
    /// reads the files can start while the walk lists the rest.
    package static func walk(root: [UInt8], prefix: [UInt8] = [], limits: PackageLimits = PackageLimits(),
                             found: @escaping (ArraySlice<SourceItem>) -> Void) throws {
        var listing = Listing(found: found)
        try walk(directory: root, packagePath: prefix, depth: 0, limits: limits, walked: WalkedFolder(root: root, prefix: prefix),
                 into: &listing)
        listing.handOver()
    }

    /// The items listed and not yet handed over, and how many were listed in all.
    private struct Listing {
        /// Items are handed over in runs of this many (the last run aside).
        static let run = 256
        private var pending: [SourceItem] = []
        private(set) var count = 0
        let found: (ArraySlice<SourceItem>) -> Void

        init(found: @escaping (ArraySlice<SourceItem>) -> Void) { self.found = found }

        mutating func append(_ item: SourceItem) {
            pending.append(item)
            count += 1
            if pending.count == Self.run { handOver() }
        }

        mutating func handOver() {
            guard !pending.isEmpty else { return }
            found(pending[...])
            pending.removeAll(keepingCapacity: true)
        }
    }

    /// Describes one path with `lstat`, as the item it would become at `packagePath`.
    public static func item(at absolute: [UInt8], packagePath: [UInt8]) throws -> SourceItem {
        var info = stat()
        let result = absolute.withCString { lstat($0, &info) }
        guard result == 0 else { throw ReadError.io(path: String(decoding: absolute, as: UTF8.self), errnoText()) }
        return try item(info, at: absolute, packagePath: packagePath)
    }

    /// The item `info` (from `lstat`) describes.
    package static func item(_ info: stat, at absolute: [UInt8], packagePath: [UInt8], walked: WalkedFolder? = nil) throws -> SourceItem {
        let mode = UInt32(info.st_mode)
        let path = ArchivePath(raw: packagePath)
        switch mode & UInt32(S_IFMT) {
        case UInt32(S_IFREG):
            // The shared root serves only where the package path is the walked path as it was.
            let origin: SourceItem.Origin = if let walked, path.bytes == packagePath { .walked(walked) } else { .file(absolute) }
            return SourceItem(path: path, kind: .file, mode: mode & 0o7777, size: Int64(info.st_size), origin: origin)
        case UInt32(S_IFDIR):
            return SourceItem(path: path, kind: .directory, mode: mode & 0o7777, size: 0, origin: .none)
        case UInt32(S_IFLNK):
            return SourceItem(path: path, kind: .symlink, mode: mode & 0o7777, size: 0, linkTarget: try readLink(absolute), origin: .none)
        case UInt32(S_IFCHR):
            return SourceItem(path: path, kind: .characterDevice, mode: mode & 0o7777, size: 0, origin: .none)
        case UInt32(S_IFBLK):
            return SourceItem(path: path, kind: .blockDevice, mode: mode & 0o7777, size: 0, origin: .none)
        case UInt32(S_IFIFO):
            return SourceItem(path: path, kind: .fifo, mode: mode & 0o7777, size: 0, origin: .none)
        default:
            return SourceItem(path: path, kind: .socket, mode: mode & 0o7777, size: 0, origin: .none)
        }
    }

    private static func walk(directory: [UInt8], packagePath: [UInt8], depth: Int, limits: PackageLimits, walked: WalkedFolder,
                             into listing: inout Listing) throws {
        guard depth < maxDepth else {
            throw ReadError.unreadable(path: String(decoding: packagePath, as: UTF8.self), "folders nest deeper than \(maxDepth) levels")
        }
        for (name, info) in try entries(in: directory) {
            guard listing.count < limits.maxEntries else {
                throw ReadError.unreadable(path: nil, "more than \(limits.maxEntries) entries")
            }
            let absolute = directory + [UInt8(ascii: "/")] + name
            let childPath = packagePath.isEmpty ? name : packagePath + [UInt8(ascii: "/")] + name
            let item = try item(info, at: absolute, packagePath: childPath, walked: walked)
            listing.append(item)
            // A folder whose package path is already too long is listed (and refused as
            // `unsafe-path`) but not entered: nothing in it could be extracted, and deeper down
            // the system's own path limit would stop the walk with a bare "File name too long".
            if item.kind == .directory && childPath.count <= PackageLimits.maxPathBytes {
                try walk(directory: absolute, packagePath: childPath, depth: depth + 1, limits: limits, walked: walked, into: &listing)
            }
        }
    }

    /// The names in a folder, without `.` and `..`, sorted bytewise, each with its `lstat`.
    /// The stat is taken relative to the open folder (`fstatat`): by absolute path, the kernel
    /// would walk the whole path again for every file.
    package static func entries(in directory: [UInt8]) throws -> [(name: [UInt8], info: stat)] {
        guard let handle = directory.withCString({ opendir($0) }) else {
            throw ReadError.io(path: String(decoding: directory, as: UTF8.self), errnoText())
        }
        defer { closedir(handle) }
        let folder = dirfd(handle)
        var entries: [(name: [UInt8], info: stat)] = []
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw -> [UInt8] in
                Array(raw.prefix { $0 != 0 })
            }
            if name == [UInt8(ascii: ".")] || name == [UInt8(ascii: "."), UInt8(ascii: ".")] { continue }
            var info = stat()
            guard name.withCString({ fstatat(folder, $0, &info, AT_SYMLINK_NOFOLLOW) }) == 0 else {
                throw ReadError.io(path: String(decoding: directory + [UInt8(ascii: "/")] + name, as: UTF8.self), errnoText())
            }
            entries.append((name, info))
        }
        return entries.sorted { $0.name.lexicographicallyPrecedes($1.name) }
    }

    static func readLink(_ absolute: [UInt8]) throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 4097)
        let count = absolute.withCString { path in
            buffer.withUnsafeMutableBufferPointer { readlink(path, UnsafeMutableRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self), 4096) }
        }
        guard count >= 0 else { throw ReadError.io(path: String(decoding: absolute, as: UTF8.self), errnoText()) }
        return Array(buffer[0..<count])
    }
}
