import PkgKitDiagnostics
import PkgKitIdentity
import PkgKitFormat

/// `version-not-bumped`: an update must have a strictly greater ContentVersion.
public struct VersionBumpRule: Rule {
    public init() {}
    public func check(_ package: PackageFacts, _ context: RuleContext) -> [Diagnostic] {
        guard let previous = context.previous?.contentVersion,
              let text = package.parsedContentInfo?.contentVersion,
              let version = ContentVersion(text), !(version > previous) else { return [] }
        let example = previous.bumped(.minor).map { "\($0)" } ?? "a greater version"
        return [Diagnostic(.versionNotBumped, path: ContentInfo.fileName,
            words: "ContentVersion \(text) is not greater than the previous \(previous): \(hint: .bumpVersion(example: example))")]
    }
}
