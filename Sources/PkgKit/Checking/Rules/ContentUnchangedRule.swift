import PkgKitDiagnostics
import PkgKitIdentity
import PkgKitFormat

/// `content-unchanged` (warning): the version went up but not one payload byte changed.
public struct ContentUnchangedRule: Rule {
    public init() {}
    public func check(_ package: PackageFacts, _ context: RuleContext) -> [Diagnostic] {
        guard let previous = context.previous, let old = previous.payloadDigests,
              let text = package.parsedContentInfo?.contentVersion, let version = ContentVersion(text),
              version > previous.contentVersion,
              let new = PayloadDigests.of(package), new == old else { return [] }
        return [Diagnostic(.contentUnchanged, path: nil, "ContentVersion went from \(previous.contentVersion) to \(text) but the content is byte-identical: users would download nothing new")]
    }
}
