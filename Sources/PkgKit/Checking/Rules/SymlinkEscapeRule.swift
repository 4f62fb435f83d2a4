import PkgKitDiagnostics
import PkgKitFormat

/// `symlink-escape`: a link whose target is absolute, or resolves (through any chain of links
/// in the package) outside `Contents/`, or a loop. Links outside `Contents/` are judged too:
/// they are already `outside-contents`, but an escaping one is worth naming as such.
public struct SymlinkEscapeRule: Rule {
    public init() {}
    public func check(_ package: PackageFacts, _ context: RuleContext) -> [Diagnostic] {
        guard package.entries.contains(where: { $0.kind == .symlink }) else { return [] }
        let resolver = LinkResolver(package)
        return package.entries.compactMap { entry in
            guard entry.kind == .symlink, entry.pathProblem == nil else { return nil }
            let target = PathDisplay.printable(entry.linkTarget ?? [])
            guard entry.path.isInsideContents else {
                return Diagnostic(.symlinkEscape, path: entry.path.description, "link to '\(target)' outside Contents/: links must stay inside Contents/")
            }
            switch resolver.resolve(entry.path.string) {
            case .escapes:
                return Diagnostic(.symlinkEscape, path: entry.path.description, "link to '\(target)' leads outside Contents/: use a relative target inside Contents/")
            case .loop:
                return Diagnostic(.symlinkEscape, path: entry.path.description, "link to '\(target)' is part of a loop: point it at a real file")
            case .inside, .dangling:
                return nil
            }
        }
    }
}
