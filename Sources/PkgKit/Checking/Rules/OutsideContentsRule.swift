import PkgKitDiagnostics
import PkgKitFormat

/// `outside-contents`: only ContentInfo.plist and Contents/ may sit at the package root.
public struct OutsideContentsRule: Rule {
    public init() {}
    public func check(_ package: PackageFacts, _ context: RuleContext) -> [Diagnostic] {
        var reportedTops: Set<String> = []
        return package.entries.compactMap { entry in
            let top = entry.path.topLevel
            if entry.path.string == ContentInfo.fileName && entry.kind == .file { return nil }
            if top == "Contents" && (entry.path.isInsideContents || entry.kind == .directory) { return nil }
            if entry.pathProblem != nil || JunkFileRule.isJunk(entry.path) { return nil }
            // One finding per stray top-level item, not one per file inside it.
            guard reportedTops.insert(top).inserted else { return nil }
            return Diagnostic(.outsideContents, path: entry.path.description,
                              "only ContentInfo.plist and Contents/ may be at the package root: move this into Contents/ or remove it")
        }
    }
}
