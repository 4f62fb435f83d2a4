/// `junk-file` (warning): file-system and version-control litter. `create` leaves it out.
public struct JunkFileRule: Rule {
    /// Names that are junk wherever they appear.
    static let junkNames: Set<String> = [".DS_Store", "Thumbs.db", "desktop.ini"]
    /// Folders that are junk with everything in them.
    static let junkFolders: Set<String> = ["__MACOSX", ".git", ".svn", ".hg"]

    public init() {}

    /// True when the path itself is junk (not merely inside a junk folder).
    public static func isJunkItself(_ path: ArchivePath) -> Bool {
        let name = path.lastComponent
        return junkNames.contains(name) || name.hasPrefix("._") || junkFolders.contains(name)
    }

    /// True when the path is junk or lies inside a junk folder.
    public static func isJunk(_ path: ArchivePath) -> Bool {
        if isJunkItself(path) { return true }
        return path.string.split(separator: "/").dropLast().contains { junkFolders.contains(String($0)) }
    }

    public func check(_ package: PackageFacts, _ context: RuleContext) -> [Diagnostic] {
        package.entries.compactMap { entry in
            guard Self.isJunkItself(entry.path) else { return nil }
            return Diagnostic(.junkFile, path: entry.path.description, "file-system or version-control litter: remove it (pkgtool create leaves it out)")
        }
    }
}
