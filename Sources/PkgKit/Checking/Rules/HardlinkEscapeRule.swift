import PkgKitDiagnostics
import PkgKitFormat

/// `hardlink-escape`: a hard link must name a file inside `Contents/` that the package holds.
public struct HardlinkEscapeRule: Rule {
    public init() {}
    public func check(_ package: PackageFacts, _ context: RuleContext) -> [Diagnostic] {
        // Most packages hold no hard link: then no table of every file's path is built.
        guard let first = package.entries.firstIndex(where: { $0.kind == .hardlink }) else { return [] }
        var files = Set(package.entries[..<first].lazy.filter { $0.kind == .file }.map(\.path))
        var findings: [Diagnostic] = []
        for entry in package.entries[first...] {
            if entry.kind == .file { files.insert(entry.path) }
            guard entry.kind == .hardlink else { continue }
            guard let target = entry.hardlinkTarget else {
                findings.append(Diagnostic(.hardlinkEscape, path: entry.path.description, "hard link without a target: remove it"))
                continue
            }
            let shown = target.description
            if PathSafety.problem(with: target.bytes) != nil || !target.isInsideContents {
                findings.append(Diagnostic(.hardlinkEscape, path: entry.path.description, "hard link to '\(shown)', outside Contents/: store a copy of the file instead"))
            } else if !files.contains(target) {
                findings.append(Diagnostic(.hardlinkEscape, path: entry.path.description, "hard link to '\(shown)', which is not in the package before it: store a copy of the file instead"))
            }
        }
        return findings
    }
}
