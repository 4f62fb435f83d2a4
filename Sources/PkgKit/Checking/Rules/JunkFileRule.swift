import PkgKitDiagnostics
import PkgKitFormat

/// `junk-file` (warning): file-system and version-control litter. `create` leaves it out.
public struct JunkFileRule: Rule {
    /// Names that are junk wherever they appear.
    static let junkNames: Set<String> = [".DS_Store", "Thumbs.db", "desktop.ini"]
    /// Folders that are junk with everything in them.
    static let junkFolders: Set<String> = ["__MACOSX", ".git", ".svn", ".hg"]

    public init() {}

    private static let junkNameBytes = junkNames.map { Array($0.utf8) }
    private static let junkFolderBytes = junkFolders.map { Array($0.utf8) }

    /// True when the path itself is junk (not merely inside a junk folder).
    public static func isJunkItself(_ path: ArchivePath) -> Bool {
        let bytes = path.bytes
        let name = bytes[(bytes.lastIndex(of: UInt8(ascii: "/")).map { $0 + 1 } ?? 0)...]
        return isJunkName(name) || isJunkFolder(name)
    }

    /// True when the path is junk or lies inside a junk folder. Compared as bytes: create asks it
    /// of every file, and splitting each path into strings would cost more than the test itself.
    public static func isJunk(_ path: ArchivePath) -> Bool {
        if isJunkItself(path) { return true }
        return path.bytes.split(separator: UInt8(ascii: "/")).dropLast().contains { isJunkFolder($0) }
    }

    private static func isJunkName(_ name: ArraySlice<UInt8>) -> Bool {
        name.starts(with: [UInt8(ascii: "."), UInt8(ascii: "_")]) || junkNameBytes.contains { name.elementsEqual($0) }
    }

    private static func isJunkFolder(_ name: ArraySlice<UInt8>) -> Bool {
        junkFolderBytes.contains { name.elementsEqual($0) }
    }

    public func check(_ package: PackageFacts, _ context: RuleContext) -> [Diagnostic] {
        package.entries.compactMap { entry in
            guard Self.isJunkItself(entry.path) else { return nil }
            return Diagnostic(.junkFile, path: entry.path.description, "file-system or version-control litter: remove it (pkgtool create leaves it out)")
        }
    }
}
