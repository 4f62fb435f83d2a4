import PkgKitDiagnostics
import PkgKitIdentity
import PkgKitFormat

/// `invalid-content-version` and `content-version-mismatch`.
public struct ContentVersionRule: Rule {
    public init() {}
    public func check(_ package: PackageFacts, _ context: RuleContext) -> [Diagnostic] {
        guard let version = package.parsedContentInfo?.contentVersion else { return [] }
        var findings: [Diagnostic] = []
        if let problem = ContentVersion.problem(with: version) {
            findings.append(Diagnostic(.invalidContentVersion, path: ContentInfo.fileName, "ContentVersion \(PathDisplay.printable(problem))"))
        }
        if let expected = context.expectedContentVersion, expected != version {
            let message: DiagnosticMessage = switch context.expectationsFrom {
            case .flags: "\(hint: .expectedContentVersion(PathDisplay.printable(expected))) differs from ContentInfo.plist's ContentVersion \(PathDisplay.printable(version)): make them agree"
            case .catalog: "ContentVersion \(PathDisplay.printable(version)) differs from the catalog's \(PathDisplay.printable(expected)): the server holds the wrong package; publish it again"
            }
            findings.append(Diagnostic(.contentVersionMismatch, path: ContentInfo.fileName, words: message))
        }
        return findings
    }
}
