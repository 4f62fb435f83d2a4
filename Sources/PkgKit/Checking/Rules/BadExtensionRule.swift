/// `bad-extension`: a package file must be named `*.pkg`. Folders have no name to judge, and
/// installing is not uploading: `extract` (and `sync`, which installs as it does) take a `.zip`.
public struct BadExtensionRule: Rule {
    public init() {}
    public func check(_ package: PackageFacts, _ context: RuleContext) -> [Diagnostic] {
        guard context.purpose != .extract, let name = package.archiveName, !name.hasSuffix(".pkg") else { return [] }
        return [Diagnostic(.badExtension, path: nil, "'\(PathDisplay.printable(name))' does not end in .pkg: the store accepts only .pkg uploads; rename it")]
    }
}
