import PkgKitDiagnostics
import PkgKitFormat

/// `missing-content-info`, `invalid-content-info` and `missing-key`: the root
/// ContentInfo.plist must exist, parse as a dictionary and hold both keys as strings.
public struct ContentInfoRule: Rule {
    public init() {}
    public func check(_ package: PackageFacts, _ context: RuleContext) -> [Diagnostic] {
        let path = ContentInfo.fileName
        if package.contentInfoTooLarge {
            return [Diagnostic(.invalidContentInfo, path: path, "is larger than \(PackageLimits.maxContentInfoBytes) bytes: it should hold only ContentVersion and IAPProductIdentifier")]
        }
        guard let parsed = package.parsedContentInfo else {
            // A package that could not be read at all already says so; do not pile on.
            if package.stoppedEarly || package.stoppedAtSizeLimit || (!package.readFailures.isEmpty && package.entries.isEmpty) { return [] }
            return [Diagnostic(.missingContentInfo, path: path, "no ContentInfo.plist at the package root: add one with ContentVersion and IAPProductIdentifier")]
        }
        var findings: [Diagnostic] = []
        if let reason = parsed.invalidReason {
            findings.append(Diagnostic(.invalidContentInfo, path: path, "\(path) \(reason)"))
        }
        for key in parsed.missingKeys {
            if let near = parsed.misspelling(of: key) {
                findings.append(Diagnostic(.missingKey, path: path, "\(path) has no \(key) key but has \(PathDisplay.printable(near)): did you mean \(key)? Rename the key"))
            } else {
                findings.append(Diagnostic(.missingKey, path: path, "\(path) has no \(key) key: add it as a <string>"))
            }
        }
        return findings
    }
}
