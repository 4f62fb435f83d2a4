import Foundation
import PkgKit
import Testing
import TestSupport

/// One wrapping folder (SPEC section 1) in every reader: a package whose root holds exactly one
/// folder holding ContentInfo.plist reads like the bare layout, and says which folder it was.
@Suite(.offThePool, .libArchive) struct WrappingFolderTests {
    /// `Folder/` holding a valid package, with a junk file so that a diagnostic has a path.
    @discardableResult
    static func wrappedTree(_ scratch: Scratch, folder: String = "Folder") throws -> String {
        try scratch.content("\(folder)", id: "com.example.wrapped", version: "2.0", files: ["a.txt": "alpha", "d/b.txt": "beta"])
        try scratch.write("\(folder)/Contents/.DS_Store", "junk")
        return scratch.path(folder)
    }

    static func expectWrapped(_ path: String, format: PackageFormat, wrapper: String = "Folder") throws {
        let check = try PackageCheck.run(path, context: RuleContext(purpose: .validate))
        #expect(check.facts.format == format)
        #expect(check.facts.wrapper == wrapper, "\(path)")
        #expect(check.contentInfo == ContentInfo(contentVersion: "2.0", productIdentifier: "com.example.wrapped"))
        #expect(check.facts.fileCount == 3)
        // Paths stay relative to the package root, inside the wrapper.
        #expect(check.diagnostics.map(\.code) == [.junkFile], "\(check.diagnostics)")
        #expect(check.diagnostics.first?.path == "Contents/.DS_Store")
        let report = PackageReport(check, strict: false)
        #expect(report.valid && report.wrapper == wrapper)
    }

    @Test func zipMadeByZipDashR() throws {
        let scratch = try Scratch()
        try Self.wrappedTree(scratch)
        try CommandRunner.shell("zip -qr wrapped.zip Folder && mv wrapped.zip wrapped.pkg", in: scratch.url)
        try Self.expectWrapped(scratch.path("wrapped.pkg"), format: .zip)
    }

    @Test func tarAndXarMadeByBsdtar() throws {
        let scratch = try Scratch()
        try Self.wrappedTree(scratch)
        try CommandRunner.shell("bsdtar -czf t.pkg Folder && bsdtar --format xar -cf x.pkg Folder", in: scratch.url)
        try Self.expectWrapped(scratch.path("t.pkg"), format: .tar)
        try Self.expectWrapped(scratch.path("x.pkg"), format: .xar)
    }

    @Test func xarReadByPkgKitItself() throws {
        let scratch = try Scratch()
        let files: [XarCrafter.File] = [
            .dir("Folder"), XarCrafter.File(path: "Folder/ContentInfo.plist", data: XarCrafter.plist(version: "2.0", id: "com.example.wrapped")),
            .file("Folder/Contents/a.txt", "alpha"), .file("Folder/Contents/d/b.txt", "beta"), .file("Folder/Contents/.DS_Store", "junk"),
        ]
        try Self.expectWrapped(try XarCrafter(files).write(to: scratch.path("x.pkg")), format: .xar)
    }

    @Test func unpackedFolder() throws {
        let scratch = try Scratch()
        try Self.wrappedTree(scratch, folder: "outer/Folder")
        try Self.expectWrapped(scratch.path("outer"), format: .folder)
    }

    /// An installer package exported from an Xcode In-App Purchase Content target: the Payload
    /// wraps the content in a folder named after the target.
    @Test func flatInstallerPackageWhosePayloadWrapsTheContent() throws {
        let scratch = try Scratch()
        try Self.wrappedTree(scratch, folder: "payload/MyContent")
        try scratch.write("flat/Distribution", "<installer-gui-script minSpecVersion=\"1\"/>")
        try scratch.write("flat/comp.pkg/PackageInfo", "<pkg-info/>")
        try CommandRunner.shell("cd payload && find . | sort | bsdtar --format odc -n -cf - -T - | gzip -n > ../flat/comp.pkg/Payload && cd ../flat && bsdtar --format xar -cf ../installer.pkg Distribution comp.pkg", in: scratch.url)
        try Self.expectWrapped(scratch.path("installer.pkg"), format: .flatPackage, wrapper: "MyContent")
    }

    /// Only exactly one folder, holding ContentInfo.plist, is a wrapper; anything else reads as it is.
    @Test func notAWrapper() throws {
        let scratch = try Scratch()
        let valid = [XarCrafter.contentInfo(), .file("Contents/a.txt", "a")]
        let cases: [(String, [XarCrafter.File], Set<DiagnosticCode>)] = [
            ("bare", valid, []),
            ("stray folder first", [.file("Art/x.png", "x")] + valid, [.outsideContents]),
            ("two folders", [XarCrafter.File(path: "A/ContentInfo.plist", data: XarCrafter.plist()), .file("A/Contents/a.txt", "a"), .file("B/b.txt", "b")],
             [.missingContentInfo, .missingContents, .outsideContents]),
            ("a folder without ContentInfo.plist", [.file("A/Contents/a.txt", "a")], [.missingContentInfo, .missingContents, .outsideContents]),
            ("a file beside the folder", [XarCrafter.File(path: "A/ContentInfo.plist", data: XarCrafter.plist()), .file("A/Contents/a.txt", "a"), .file("readme", "r")],
             [.missingContentInfo, .missingContents, .outsideContents]),
        ]
        for (name, files, expected) in cases {
            let path = try XarCrafter(files).write(to: scratch.path("\(name).pkg"))
            let check = try PackageCheck.run(path, context: RuleContext(purpose: .validate))
            #expect(check.facts.wrapper == nil, "\(name)")
            #expect(Set(check.diagnostics.map(\.code)) == expected, "\(name): \(check.diagnostics)")
        }
    }

    @Test func inspectNamesTheWrapper() throws {
        let scratch = try Scratch()
        try Self.wrappedTree(scratch)
        try CommandRunner.shell("zip -qr w.pkg Folder && bsdtar --format xar -cf x.pkg Folder", in: scratch.url)
        for name in ["w.pkg", "x.pkg"] {
            for withFiles in [false, true] {
                let report = try InspectReport.make(scratch.path(name), withFiles: withFiles)
                #expect(report.wrapper == "Folder")
                #expect(report.productIdentifier == "com.example.wrapped")
                #expect(report.fileCount == 3, "\(name)")
                #expect(report.diagnostics.isEmpty)
                if withFiles { #expect(report.files?.contains { $0.path == "Contents/d/b.txt" } == true) }
            }
        }
        #expect(try InspectReport.make(scratch.path("Folder"), withFiles: false).wrapper == nil)
    }
}
