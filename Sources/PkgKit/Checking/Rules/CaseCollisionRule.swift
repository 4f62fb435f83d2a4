import Foundation
import PkgKitDiagnostics
import PkgKitFormat

/// `case-collision` (a warning here; `convert` refuses it): two paths that differ only in letter
/// case, in Unicode normalization (`café` spelt with one code point or with `e` and a combining
/// accent), or in both. A Mac's disk (and a device's) ignores the difference, so one of the two
/// files would be lost there.
public struct CaseCollisionRule: Rule {
    public init() {}
    public func check(_ package: PackageFacts, _ context: RuleContext) -> [Diagnostic] {
        // Keyed by the folded key's hash, holding the first entry's index: a table of 100,000
        // folded strings would cost more memory than the facts themselves. Equal hashes are
        // confirmed by comparing the keys; different keys with one hash (rare) go to `others`.
        let paths = package.entries.map(\.path) + Self.impliedFolders(package.entries)
        var firstByHash: [Int: Int] = [:]
        var others: [Int: [Int]] = [:]
        var findings: [Diagnostic] = []
        for (index, path) in paths.enumerated() {
            let key = Self.foldedKey(path)
            let hash = key.hashValue
            guard let first = firstByHash[hash] else {
                firstByHash[hash] = index
                continue
            }
            let candidates = [first] + others[hash, default: []]
            if let match = candidates.first(where: { Self.foldedKey(paths[$0]) == key }) {
                let firstPath = paths[match]
                if firstPath != path {
                    findings.append(Diagnostic(.caseCollision, path: path.description, Self.message(path, clashingWith: firstPath)))
                }
            } else {
                others[hash, default: []].append(index)
            }
        }
        return findings
    }

    /// The folders that entries lie in without being entries themselves (a zip made with
    /// `zip -D`, many tars), sorted: `Art/a.txt` and `art/b.txt` are two folders that a Mac's
    /// disk takes for one, though neither is listed.
    package static func impliedFolders(_ entries: [EntryFacts]) -> [ArchivePath] {
        var walked = Set<[UInt8]>()
        // Entries come folder by folder: most share the one before's folder, walked already.
        var lastFolder: ArraySlice<UInt8> = []
        for entry in entries {
            let bytes = entry.path.bytes
            guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")), slash > 0 else { continue }
            if bytes[..<slash] == lastFolder { continue }
            lastFolder = bytes[..<slash]
            var path = bytes[...]
            // A folder met before had its parents walked then.
            while let slash = path.lastIndex(of: UInt8(ascii: "/")), slash > path.startIndex,
                  walked.insert(Array(path[..<slash])).inserted {
                path = path[..<slash]
            }
        }
        for entry in entries where entry.kind == .directory { walked.remove(entry.path.bytes) }
        return walked.sorted { $0.lexicographicallyPrecedes($1) }.map { ArchivePath(raw: $0) }
    }

    /// How two paths with one folded key differ.
    package enum Clash: Equatable {
        /// Only in letter case: `Level.json` and `level.json`.
        case letterCase
        /// Only in Unicode normalization: `café` precomposed (NFC) and decomposed (NFD).
        case normalization
        /// In both.
        case letterCaseAndNormalization
    }

    /// How `path` and `other`, equal once folded, differ.
    package static func clash(_ path: ArchivePath, _ other: ArchivePath) -> Clash {
        // Scalar by scalar: Swift's `==` on strings already ignores normalization.
        let a = path.string, b = other.string
        if a.unicodeScalars.elementsEqual(b.unicodeScalars, by: Self.sameIgnoringCase) { return .letterCase }
        let composedA = a.precomposedStringWithCanonicalMapping, composedB = b.precomposedStringWithCanonicalMapping
        if composedA.unicodeScalars.elementsEqual(composedB.unicodeScalars) { return .normalization }
        return .letterCaseAndNormalization
    }

    /// Scalars that are one letter in another case (or the same scalar): normalization aside.
    private static func sameIgnoringCase(_ a: Unicode.Scalar, _ b: Unicode.Scalar) -> Bool {
        a == b || a.properties.lowercaseMapping == b.properties.lowercaseMapping
    }

    /// The finding's message for `path`, which clashes with the earlier `other`.
    package static func message(_ path: ArchivePath, clashingWith other: ArchivePath) -> String {
        let advice = "one file on a Mac's disk, which would keep only one of them: rename one of them"
        switch clash(path, other) {
        case .letterCase:
            return "differs from '\(other.description)' only in letter case: \(advice)"
        case .normalization:
            return "is '\(other.description)' in another Unicode normalization (\(form(path)) here, \(form(other)) there): \(advice)"
        case .letterCaseAndNormalization:
            return "differs from '\(other.description)' only in letter case and Unicode normalization (\(form(path)) here, \(form(other)) there): \(advice)"
        }
    }

    /// `NFC` when `path` is precomposed, else `NFD` (the decomposed form a Mac's HFS+ wrote).
    private static func form(_ path: ArchivePath) -> String {
        let text = path.string
        return text.unicodeScalars.elementsEqual(text.precomposedStringWithCanonicalMapping.unicodeScalars) ? "NFC" : "NFD"
    }

    /// The path as a Mac's disk compares it: NFC, then lowercased. ASCII paths, nearly all of
    /// them, skip Foundation's normalisation, which is costly per call.
    package static func foldedKey(_ path: ArchivePath) -> String {
        if path.bytes.allSatisfy({ $0 < 0x80 }) {
            return String(decoding: path.bytes.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }, as: UTF8.self)
        }
        return path.string.precomposedStringWithCanonicalMapping.lowercased()
    }
}
