/// `unsafe-path`: absolute paths, `..`, empty components, control characters, invalid UTF-8
/// and over-long names or paths.
public struct UnsafePathRule: Rule {
    public init() {}
    public func check(_ package: PackageFacts, _ context: RuleContext) -> [Diagnostic] {
        package.entries.compactMap { entry in
            entry.pathProblem.map { Diagnostic(.unsafePath, path: entry.path.description, $0) }
        }
    }
}
