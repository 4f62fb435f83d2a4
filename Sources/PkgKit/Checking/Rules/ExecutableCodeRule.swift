import PkgKitDiagnostics
import PkgKitFormat

/// `executable-code`: the store forbids code in hosted content, whatever the file is called.
public struct ExecutableCodeRule: Rule {
    public init() {}
    public func check(_ package: PackageFacts, _ context: RuleContext) -> [Diagnostic] {
        package.entries.compactMap { entry in
            entry.executable.map {
                Diagnostic(.executableCode, path: entry.path.description, "this file is \($0.phrase): hosted content may not contain executable code; remove it")
            }
        }
    }
}
