import PkgKitDiagnostics
import PkgKitFormat

/// `unknown-key` (warning): ContentInfo.plist keys other than the two the store reads. A near
/// miss of a missing key is named as such: renaming it is the fix, not removing it.
public struct UnknownKeyRule: Rule {
    public init() {}
    public func check(_ package: PackageFacts, _ context: RuleContext) -> [Diagnostic] {
        guard let parsed = package.parsedContentInfo else { return [] }
        return parsed.unknownKeys.map { key in
            let shown = PathDisplay.printable(key)
            if let intended = parsed.intendedKey(for: key) {
                return Diagnostic(.unknownKey, path: ContentInfo.fileName, "unknown key '\(shown)': did you mean \(intended)? Rename it")
            }
            return Diagnostic(.unknownKey, path: ContentInfo.fileName, "unknown key '\(shown)': only ContentVersion and IAPProductIdentifier are read; remove it")
        }
    }
}
