/// `unknown-key` (warning): ContentInfo.plist keys other than the two the store reads.
public struct UnknownKeyRule: Rule {
    public init() {}
    public func check(_ package: PackageFacts, _ context: RuleContext) -> [Diagnostic] {
        (package.parsedContentInfo?.unknownKeys ?? []).map {
            Diagnostic(.unknownKey, path: ContentInfo.fileName, "unknown key '\(PathDisplay.printable($0))': only ContentVersion and IAPProductIdentifier are read; remove it")
        }
    }
}
