import PkgKitDiagnostics
import PkgKitFormat

/// `duplicate-entry`: the same path twice. No xar reader rejects this by itself, and which copy
/// wins depends on the reader, so the package is refused.
public struct DuplicateEntryRule: Rule {
    public init() {}
    public func check(_ package: PackageFacts, _ context: RuleContext) -> [Diagnostic] {
        var seen: Set<ArchivePath> = []
        seen.reserveCapacity(package.entries.count)
        var reported: Set<ArchivePath> = []
        var findings: [Diagnostic] = []
        for entry in package.entries where !seen.insert(entry.path).inserted && reported.insert(entry.path).inserted {
            findings.append(Diagnostic(.duplicateEntry, path: entry.path.description, "this path appears more than once: keep one copy"))
        }
        return findings
    }
}
