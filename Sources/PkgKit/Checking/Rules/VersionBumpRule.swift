/// `version-not-bumped`: an update must have a strictly greater ContentVersion.
public struct VersionBumpRule: Rule {
    public init() {}
    public func check(_ package: PackageFacts, _ context: RuleContext) -> [Diagnostic] {
        guard let previous = context.previous?.contentVersion,
              let text = package.parsedContentInfo?.contentVersion,
              let version = ContentVersion(text), !(version > previous) else { return [] }
        return [Diagnostic(.versionNotBumped, path: ContentInfo.fileName,
            "ContentVersion \(text) is not greater than the previous \(previous): raise it (e.g. --bump minor)")]
    }
}
