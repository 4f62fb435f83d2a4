import PkgKitDiagnostics
import PkgKitFormat

/// `unsafe-path`: absolute paths, `..`, empty components, control characters, invalid UTF-8
/// and over-long names or paths. A folder whose own path is unsafe is reported once, for
/// everything inside it, not once per entry below it.
public struct UnsafePathRule: Rule {
    public init() {}
    public func check(_ package: PackageFacts, _ context: RuleContext) -> [Diagnostic] {
        var ancestors: [ArchivePath: ArchivePath?] = [:]
        var order: [ArchivePath] = []
        var findings: [ArchivePath: (problem: String, inside: Int)] = [:]
        for entry in package.entries {
            guard let problem = entry.pathProblem else { continue }
            if let folder = Self.unsafeAncestor(of: entry.path, known: &ancestors) {
                if findings[folder] == nil {
                    order.append(folder)
                    findings[folder] = (PathSafety.problem(with: folder.bytes) ?? problem, 0)
                }
                findings[folder]!.inside += 1
            } else if findings[entry.path] == nil {
                order.append(entry.path)
                findings[entry.path] = (problem, 0)
            }
        }
        return order.map { path in
            let (problem, inside) = findings[path]!
            let covered = inside == 0 ? "" : " (this covers the \(inside) \(inside == 1 ? "entry" : "entries") inside it)"
            return Diagnostic(.unsafePath, path: path.description, problem + covered)
        }
    }

    /// The outermost folder above `path` whose own path is unsafe, or nil; folders already
    /// judged are looked up in `known`, so each is judged once.
    static func unsafeAncestor(of path: ArchivePath, known: inout [ArchivePath: ArchivePath?]) -> ArchivePath? {
        guard let slash = path.bytes.lastIndex(of: UInt8(ascii: "/")), slash > 0 else { return nil }
        let parent = ArchivePath(raw: Array(path.bytes[..<slash]))
        guard parent != path else { return nil }
        if let judged = known[parent] { return judged }
        let found = unsafeAncestor(of: parent, known: &known) ?? (PathSafety.problem(with: parent.bytes) == nil ? nil : parent)
        known[parent] = found
        return found
    }
}
