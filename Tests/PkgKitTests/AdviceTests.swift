import Foundation
@testable import PkgKit
import Testing
import TestSupport

/// What the diagnostics advise, beyond their codes: the nearest known key for a near miss, one
/// `unsafe-path` for an over-long folder, code named in words.
@Suite struct AdviceTests {
    static func check(_ files: [XarCrafter.File]) throws -> [Diagnostic] {
        let scratch = try Scratch()
        let path = try XarCrafter(files).write(to: scratch.path("p.pkg"))
        return try PackageCheck.run(path, context: RuleContext(purpose: .validate)).diagnostics
    }

    static func plist(_ body: String) -> XarCrafter.File {
        XarCrafter.File(path: "ContentInfo.plist", data: Array("<plist><dict>\(body)</dict></plist>".utf8))
    }

    /// `IAPProductionIdentifier`, as a widely copied tutorial spells it.
    @Test func nearMissOfAKeyIsNamed() throws {
        let found = try Self.check([Self.plist("<key>ContentVersion</key><string>1.0</string><key>IAPProductionIdentifier</key><string>a.b</string>"), .file("Contents/a", "a")])
        #expect(Set(found.map(\.code)) == [.missingKey, .unknownKey])
        for diagnostic in found {
            #expect(diagnostic.message.contains("did you mean IAPProductIdentifier?"), "\(diagnostic.message)")
            #expect(!diagnostic.message.contains("remove it"))
        }
        // Case alone, and a swapped pair of letters.
        let lower = try Self.check([Self.plist("<key>contentversion</key><string>1.0</string><key>IAPProductIdentifier</key><string>a.b</string>"), .file("Contents/a", "a")])
        #expect(lower.contains { $0.code == .unknownKey && $0.message.contains("did you mean ContentVersion?") })
        let swapped = try Self.check([Self.plist("<key>ContentVresion</key><string>1.0</string><key>IAPProductIdentifier</key><string>a.b</string>"), .file("Contents/a", "a")])
        #expect(swapped.contains { $0.code == .missingKey && $0.message.contains("but has ContentVresion: did you mean ContentVersion?") })
    }

    @Test func farKeysAreStillToBeRemoved() throws {
        let found = try Self.check([Self.plist("<key>ContentVersion</key><string>1.0</string><key>IAPProductIdentifier</key><string>a.b</string><key>Author</key><string>me</string><key>ContentVersions</key><string>x</string>"), .file("Contents/a", "a")])
        #expect(found.map(\.code) == [.unknownKey, .unknownKey])
        // Both known keys are present: nothing to mean instead.
        #expect(found.allSatisfy { $0.message.hasSuffix("remove it") }, "\(found)")
    }

    @Test func nearestNameIsCloseOrNothing() {
        #expect(NearestName.suggestion(for: "craete", among: ["create", "validate", "extract", "inspect", "diff"]) == "create")
        #expect(NearestName.suggestion(for: "inpsect", among: ["create", "validate", "extract", "inspect", "diff"]) == "inspect")
        #expect(NearestName.suggestion(for: "dif", among: ["create", "diff"]) == "diff")
        #expect(NearestName.suggestion(for: "frobnicate", among: ["create", "validate", "extract", "inspect", "diff"]) == nil)
        #expect(NearestName.suggestion(for: "x", among: ["diff"]) == nil)
    }

    /// Ranked names: nearest first however far, equally near ones in the order given, at most
    /// `limit`; the early stop of a far distance never changes the order.
    @Test func rankedNamesAreNearestFirst() {
        let names = ["org.zzz.other", "com.acme.maps", "com.acme.map", "com.acme.nap", "com.acme.mop", "net.far.away"]
        // maps and map are both one edit away: in the order given.
        #expect(NearestName.ranked(for: "com.acme.mapp", among: names, limit: 3) == ["com.acme.maps", "com.acme.map", "com.acme.nap"])
        #expect(NearestName.ranked(for: "COM.ACME.MAP", among: names, limit: 10)
            == ["com.acme.map", "com.acme.maps", "com.acme.nap", "com.acme.mop", "net.far.away", "org.zzz.other"])
        #expect(NearestName.ranked(for: "x", among: names, limit: 0).isEmpty)
        #expect(NearestName.ranked(for: "x", among: [], limit: 10).isEmpty)
        // The bounded distance agrees with the full one wherever it is within the bound.
        for (a, b) in [("kitten", "sitting"), ("create", "craete"), ("abc", "xyzabc"), ("", "abc"), ("same", "same")] {
            let full = NearestName.editDistance(Array(a), Array(b))
            for bound in 0...8 {
                let bounded = NearestName.editDistance(Array(a), Array(b), atMost: bound)
                #expect(full <= bound ? bounded == full : bounded > bound, "\(a) \(b) bound \(bound): \(bounded) vs \(full)")
            }
        }
    }

    /// A folder whose name is over 255 bytes: one finding for the folder, not one per entry in it.
    @Test func overLongFolderIsReportedOnce() throws {
        let long = String(repeating: "n", count: 300)
        let found = try Self.check([XarCrafter.contentInfo(), .file("Contents/ok.txt", "ok")]
            + (0..<5).map { XarCrafter.File.file("Contents/\(long)/f\($0).txt", "x") } + [.file("Contents/\(long)/sub/g.txt", "y")])
        let unsafe = found.filter { $0.code == .unsafePath }
        #expect(unsafe.count == 1, "\(unsafe)")
        #expect(unsafe.first?.path == "Contents/\(long)")
        #expect(unsafe.first?.message.contains("300 bytes") == true)
        #expect(unsafe.first?.message.contains("this covers the 7 entries inside it") == true, "\(unsafe)")
        // Two different bad names are two findings.
        let two = try Self.check([XarCrafter.contentInfo(), .file("Contents/\(long)/a", "a"), .file("Contents/\(long)x/b", "b")])
        #expect(two.filter { $0.code == .unsafePath }.count == 2)
    }

    @Test func codeIsNamedInWords() throws {
        let found = try Self.check([XarCrafter.contentInfo(), .file("Contents/run.sh", "#!/bin/sh\necho hi\n")])
        #expect(found.map(\.message) == ["this file is a script (it starts with #!): hosted content may not contain executable code; remove it"])
    }
}
