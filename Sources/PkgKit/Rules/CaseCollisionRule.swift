import Foundation

/// `case-collision` (warning): two paths that a case-insensitive file system (a device's)
/// would store as one, compared after Unicode NFC normalisation.
public struct CaseCollisionRule: Rule {
    public init() {}
    public func check(_ package: PackageFacts, _ context: RuleContext) -> [Diagnostic] {
        var firstByKey: [String: ArchivePath] = [:]
        var findings: [Diagnostic] = []
        for entry in package.entries {
            let key = entry.path.string.precomposedStringWithCanonicalMapping.lowercased()
            if let first = firstByKey[key] {
                if first != entry.path {
                    findings.append(Diagnostic(.caseCollision, path: entry.path.description,
                        "same name as '\(first.description)' on a case-insensitive file system: rename one of them"))
                }
            } else {
                firstByKey[key] = entry.path
            }
        }
        return findings
    }
}
