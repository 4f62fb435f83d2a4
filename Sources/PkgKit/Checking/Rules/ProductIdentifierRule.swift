import PkgKitDiagnostics
import PkgKitIdentity
import PkgKitFormat

/// `invalid-product-identifier` and `product-identifier-mismatch` (against the identifier the
/// caller expects and against the previous package).
public struct ProductIdentifierRule: Rule {
    public init() {}
    public func check(_ package: PackageFacts, _ context: RuleContext) -> [Diagnostic] {
        guard let identifier = package.parsedContentInfo?.productIdentifier else { return [] }
        var findings: [Diagnostic] = []
        if let problem = ProductIdentifier.problem(with: identifier) {
            findings.append(Diagnostic(.invalidProductIdentifier, path: ContentInfo.fileName, problem))
        }
        let shown = PathDisplay.printable(identifier)
        if let expected = context.expectedProductIdentifier, expected != identifier {
            let message: DiagnosticMessage = switch context.expectationsFrom {
            case .flags: "IAPProductIdentifier \(shown) differs from \(hint: .expectedProductIdentifier(PathDisplay.printable(expected))): make them agree"
            case .catalog: "IAPProductIdentifier \(shown) differs from the catalog's \(PathDisplay.printable(expected)): the server holds the wrong package; publish it again"
            }
            findings.append(Diagnostic(.productIdentifierMismatch, path: ContentInfo.fileName, words: message))
        }
        if let previous = context.previous?.productIdentifier, previous != identifier {
            findings.append(Diagnostic(.productIdentifierMismatch, path: ContentInfo.fileName,
                "IAPProductIdentifier \(shown) differs from the previous package's \(PathDisplay.printable(previous)): an update must keep the product's identifier"))
        }
        return findings
    }
}
