import Foundation
@testable import PkgKit
import Testing

/// `case-collision` says which kind of clash it found: letter case, Unicode normalization, or
/// both, never "case-insensitive" for two names that differ only in normalization.
@Suite struct CaseCollisionTests {
    static func path(_ text: String) -> ArchivePath { ArchivePath(text) }

    @Test(arguments: [("Contents/Level.json", "Contents/level.json", CaseCollisionRule.Clash.letterCase),
                      ("Contents/caf\u{E9}.txt", "Contents/cafe\u{301}.txt", .normalization),
                      ("Contents/Caf\u{E9}.txt", "Contents/cafe\u{301}.txt", .letterCaseAndNormalization),
                      ("Contents/\u{C9}t\u{E9}", "Contents/\u{E9}t\u{E9}", .letterCase)])
    func clashKinds(first: String, second: String, kind: CaseCollisionRule.Clash) {
        #expect(CaseCollisionRule.foldedKey(Self.path(first)) == CaseCollisionRule.foldedKey(Self.path(second)))
        #expect(CaseCollisionRule.clash(Self.path(second), Self.path(first)) == kind)
    }

    static func facts(_ entries: [(String, EntryKind)]) -> PackageFacts {
        var facts = PackageFacts()
        facts.entries = entries.map { EntryFacts(path: path($0.0), kind: $0.1, mode: 0o644, size: 1) }
        return facts
    }

    /// Folders a zip implies without listing them (`zip -D`) clash too: `Art/a.txt` and
    /// `art/b.txt` are two folders a Mac's disk takes for one. Listed folders are not counted twice.
    @Test func impliedFoldersClash() {
        let implied = Self.facts([("ContentInfo.plist", .file), ("Contents/Art/a.txt", .file), ("Contents/art/b.txt", .file),
                                  ("Contents/deep/x/y.txt", .file)])
        #expect(CaseCollisionRule.impliedFolders(implied.entries).map(\.string)
            == ["Contents", "Contents/Art", "Contents/art", "Contents/deep", "Contents/deep/x"])
        let found = CaseCollisionRule().check(implied, RuleContext(purpose: .validate))
        #expect(found.map(\.path) == ["Contents/art"], "\(found)")
        #expect(found.first?.message.hasPrefix("differs from 'Contents/Art' only in letter case") == true)

        let listed = Self.facts([("Contents", .directory), ("Contents/Art", .directory), ("Contents/Art/a.txt", .file),
                                 ("Contents/art", .directory), ("Contents/art/b.txt", .file)])
        #expect(CaseCollisionRule.impliedFolders(listed.entries).isEmpty)
        #expect(CaseCollisionRule().check(listed, RuleContext(purpose: .validate)).map(\.path) == ["Contents/art"])
        let distinct = Self.facts([("Contents/a/x.txt", .file), ("Contents/b/x.txt", .file), ("Contents/a.txt", .file)])
        #expect(CaseCollisionRule().check(distinct, RuleContext(purpose: .validate)).isEmpty)
    }

    @Test func messagesNameTheKind() {
        let nfc = Self.path("Contents/caf\u{E9}.txt"), nfd = Self.path("Contents/cafe\u{301}.txt")
        let normalization = CaseCollisionRule.message(nfd, clashingWith: nfc)
        #expect(normalization.contains("in another Unicode normalization (NFD here, NFC there)"), "\(normalization)")
        #expect(!normalization.contains("case"), "\(normalization)")
        let letterCase = CaseCollisionRule.message(Self.path("Contents/level.json"), clashingWith: Self.path("Contents/Level.json"))
        #expect(letterCase.hasPrefix("differs from 'Contents/Level.json' only in letter case"), "\(letterCase)")
    }
}
