import PkgKitDiagnostics
import PkgKitFormat

/// `code-bundle` (warning): a folder named like an app, framework or plug-in bundle.
public struct CodeBundleRule: Rule {
    /// The folder suffixes that name code bundles.
    public static let suffixes = [".app", ".framework", ".appex", ".xpc", ".kext", ".plugin"]
    public init() {}
    public func check(_ package: PackageFacts, _ context: RuleContext) -> [Diagnostic] {
        package.entries.compactMap { entry in
            let name = entry.path.lastComponent.lowercased()
            guard entry.kind == .directory, let suffix = Self.suffixes.first(where: { name.hasSuffix($0) }) else { return nil }
            return Diagnostic(.codeBundle, path: entry.path.description, "a folder named *\(suffix) looks like a code bundle, which hosted content may not hold: rename or remove it")
        }
    }
}
