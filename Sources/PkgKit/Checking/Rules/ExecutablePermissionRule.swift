import PkgKitDiagnostics
import PkgKitFormat

/// `executable-permission`: a content file must not be marked executable.
///
/// `create` clears the bits instead (its output is always 0644) and only notes it, as a
/// warning, for files that are not code; code is refused by `ExecutableCodeRule` anyway.
public struct ExecutablePermissionRule: Rule {
    public init() {}
    public func check(_ package: PackageFacts, _ context: RuleContext) -> [Diagnostic] {
        package.entries.compactMap { entry in
            guard entry.kind == .file, entry.mode & 0o111 != 0 else { return nil }
            let mode = "0" + String(entry.mode & 0o7777, radix: 8)
            if context.purpose == .create {
                guard entry.executable == nil else { return nil }
                return Diagnostic(.executablePermission, path: entry.path.description,
                                  "mode \(mode) has execute bits; the package stores it as 0644", severity: .warning)
            }
            return Diagnostic(.executablePermission, path: entry.path.description,
                              "mode \(mode) has execute bits: content files must not be executable; rebuild with pkgtool create, which stores 0644")
        }
    }
}
