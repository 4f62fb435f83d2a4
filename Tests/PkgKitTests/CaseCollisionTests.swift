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

    @Test func messagesNameTheKind() {
        let nfc = Self.path("Contents/caf\u{E9}.txt"), nfd = Self.path("Contents/cafe\u{301}.txt")
        let normalization = CaseCollisionRule.message(nfd, clashingWith: nfc)
        #expect(normalization.contains("in another Unicode normalization (NFD here, NFC there)"), "\(normalization)")
        #expect(!normalization.contains("case"), "\(normalization)")
        let letterCase = CaseCollisionRule.message(Self.path("Contents/level.json"), clashingWith: Self.path("Contents/Level.json"))
        #expect(letterCase.hasPrefix("differs from 'Contents/Level.json' only in letter case"), "\(letterCase)")
    }
}
