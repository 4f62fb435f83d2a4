import Foundation

/// `case-collision` (warning): two paths that a case-insensitive file system (a device's)
/// would store as one, compared after Unicode NFC normalisation.
public struct CaseCollisionRule: Rule {
    public init() {}
    public func check(_ package: PackageFacts, _ context: RuleContext) -> [Diagnostic] {
        // Keyed by the folded key's hash, holding the first entry's index: a table of 100,000
        // folded strings would cost more memory than the facts themselves. Equal hashes are
        // confirmed by comparing the keys; different keys with one hash (rare) go to `others`.
        var firstByHash: [Int: Int] = [:]
        var others: [Int: [Int]] = [:]
        var findings: [Diagnostic] = []
        for (index, entry) in package.entries.enumerated() {
            let key = Self.foldedKey(entry.path)
            let hash = key.hashValue
            guard let first = firstByHash[hash] else {
                firstByHash[hash] = index
                continue
            }
            let candidates = [first] + others[hash, default: []]
            if let match = candidates.first(where: { Self.foldedKey(package.entries[$0].path) == key }) {
                let firstPath = package.entries[match].path
                if firstPath != entry.path {
                    findings.append(Diagnostic(.caseCollision, path: entry.path.description,
                        "same name as '\(firstPath.description)' on a case-insensitive file system: rename one of them"))
                }
            } else {
                others[hash, default: []].append(index)
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
