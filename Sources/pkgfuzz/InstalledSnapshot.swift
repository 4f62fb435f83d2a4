import Foundation

/// A version folder as the oracles compare it: every entry below it by relative path, with its
/// type, permission bits and bytes (a link's target). Two installs of the same package must give
/// equal snapshots, whatever path (whole download or delta) brought the package.
struct InstalledSnapshot: Equatable {
    /// One entry.
    enum Entry: Equatable {
        /// A regular file: its permission bits and bytes.
        case file(mode: mode_t, bytes: Data)
        /// A folder: its permission bits.
        case folder(mode: mode_t)
        /// A symbolic link: its target.
        case link(String)
        /// Anything else: its whole mode.
        case other(mode_t)
    }

    /// Every entry below the folder, by path relative to it.
    var entries: [String: Entry] = [:]

    /// The folder at `path`; nil when it is not a folder.
    init?(_ path: String) {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else { return nil }
        walk(path, relative: "")
    }

    /// Adds everything below `folder`, its paths led by `relative`.
    private mutating func walk(_ folder: String, relative: String) {
        for name in ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted() {
            let path = folder + "/" + name, key = relative.isEmpty ? name : relative + "/" + name
            var info = stat()
            guard lstat(path, &info) == 0 else { continue }
            let mode = info.st_mode & 0o7777
            switch info.st_mode & S_IFMT {
            case S_IFREG: entries[key] = .file(mode: mode, bytes: FileManager.default.contents(atPath: path) ?? Data())
            case S_IFDIR:
                entries[key] = .folder(mode: mode)
                walk(path, relative: key)
            case S_IFLNK: entries[key] = .link((try? FileManager.default.destinationOfSymbolicLink(atPath: path)) ?? "")
            default: entries[key] = .other(info.st_mode)
            }
        }
    }

    /// The paths where `self` and `other` differ, at most `limit` of them, in words.
    func differences(from other: InstalledSnapshot, limit: Int = 4) -> [String] {
        var found: [String] = []
        for key in Set(entries.keys).union(other.entries.keys).sorted() where entries[key] != other.entries[key] {
            switch (entries[key], other.entries[key]) {
            case (nil, _): found.append("\(key) is missing")
            case (_, nil): found.append("\(key) should not be there")
            case (.file(_, let mine)?, .file(_, let theirs)?) where mine != theirs:
                let at = Array(zip(mine, theirs)).firstIndex { $0 != $1 } ?? min(mine.count, theirs.count)
                found.append("\(key) differs from byte \(at) (\(mine.count) bytes, expected \(theirs.count))")
            default: found.append("\(key) differs in type or mode")
            }
            if found.count == limit { break }
        }
        return found
    }
}
