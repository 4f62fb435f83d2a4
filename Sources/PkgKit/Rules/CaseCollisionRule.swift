import Foundation

/// `case-collision` (warning): two paths that a case-insensitive file system (a device's)
/// would store as one, compared after Unicode NFC normalisation.
public struct CaseCollisionRule: Rule {
    public init() {}
    public func check(_ package: PackageFacts, _ context: RuleContext) -> [Diagnostic] {
        var firstByKey: [String: ArchivePath] = [:]
        var findings: [Diagnostic] = []
        for entry in package.entries {
            let key = Self.foldedKey(entry.path)
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

    /// The path as a case-insensitive file system compares it: NFC, then lowercased. ASCII paths,
    /// nearly all of them, skip Foundation's normalisation, which is costly per call.
    static func foldedKey(_ path: ArchivePath) -> String {
        if path.bytes.allSatisfy({ $0 < 0x80 }) {
            return String(decoding: path.bytes.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }, as: UTF8.self)
        }
        return path.string.precomposedStringWithCanonicalMapping.lowercased()
    }
}
