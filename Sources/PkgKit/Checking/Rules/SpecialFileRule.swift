import PkgKitDiagnostics
import PkgKitFormat

/// `special-file`: devices, FIFOs and sockets have no place in downloadable content.
public struct SpecialFileRule: Rule {
    public init() {}
    public func check(_ package: PackageFacts, _ context: RuleContext) -> [Diagnostic] {
        package.entries.filter(\.kind.isSpecial).map {
            Diagnostic(.specialFile, path: $0.path.description, "a \($0.kind.rawValue) entry: only files, folders and links may be in a package; remove it")
        }
    }
}
