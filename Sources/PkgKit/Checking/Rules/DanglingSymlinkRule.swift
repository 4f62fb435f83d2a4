import PkgKitDiagnostics
import PkgKitFormat

/// `dangling-symlink` (warning): a link inside `Contents/` to a path the package does not hold.
public struct DanglingSymlinkRule: Rule {
    public init() {}
    public func check(_ package: PackageFacts, _ context: RuleContext) -> [Diagnostic] {
        guard package.entries.contains(where: { $0.kind == .symlink }) else { return [] }
        let resolver = LinkResolver(package)
        return package.entries.compactMap { entry in
            guard entry.kind == .symlink, entry.pathProblem == nil, entry.path.isInsideContents,
                  resolver.resolve(entry.path.string) == .dangling else { return nil }
            let target = PathDisplay.printable(entry.linkTarget ?? [])
            return Diagnostic(.danglingSymlink, path: entry.path.description, "link to '\(target)', which is not in the package: add the target or remove the link")
        }
    }
}
