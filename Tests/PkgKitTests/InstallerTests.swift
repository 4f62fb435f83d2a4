import Foundation
import Synchronization
import Testing
import TestSupport
@testable import PkgKit

@Suite struct InstallerTests {
    /// The staging writer keeps at most ~256 folders open; a hard link made at the end needs the
    /// folders of its target and of itself open together, even when opening one evicts the rest.
    @Test(.libArchive) func hardLinkAfterManyFoldersIsInstalled() throws {
        let scratch = try Scratch()
        var files = [XarCrafter.contentInfo(),
                     XarCrafter.File(path: "Contents/d000/original.txt", data: Array("shared".utf8), hardlink: "original", id: 9000)]
        for index in 1..<257 { files.append(.file("Contents/d\(String(format: "%03d", index))/f.txt", "file \(index)")) }
        // One <name> holding slashes: its folder gets no entry of its own, so it is first opened
        // by the link itself.
        files.append(XarCrafter.File(path: "Contents/zz/link.txt", hardlink: "9000", id: 9001, rawName: true))
        try FileManager.default.createDirectory(atPath: scratch.root, withIntermediateDirectories: true)
        let package = try XarCrafter(files).write(to: scratch.root + "/p.pkg")
        let report = try Installer(documents: scratch.documents).install(package)
        #expect(report.status == .installed, "\(report.diagnostics)")
        #expect(scratch.text("Documents/com.example.book/1.0/zz/link.txt") == "shared")
        #expect(scratch.text("Documents/com.example.book/1.0/d256/f.txt") == "file 256")
    }

    @Test func installsTreeAndRecord() throws {
        let s = try Scratch()
        let pkg = try s.content("p1", id: "com.example.book", version: "1.0", files: ["a.txt": "A", "sub/b.txt": "B"], links: ["sub/l": "../a.txt"])
        let installer = Installer(documents: s.documents)
        let report = try installer.install(pkg)
        #expect(report.status == .installed)
        #expect(report.installedPath == s.documents + "/com.example.book/1.0")
        #expect(report.fileCount == 2)
        #expect(report.previousVersion == nil)
        #expect(s.text("Documents/com.example.book/1.0/a.txt") == "A")
        #expect(s.text("Documents/com.example.book/1.0/sub/b.txt") == "B")
        let link = try FileManager.default.destinationOfSymbolicLink(atPath: s.documents + "/com.example.book/1.0/sub/l")
        #expect(link == "../a.txt")
        let record = try Data(contentsOf: URL(fileURLWithPath: s.documents + "/com.example.book/ContentInfo.plist"))
        let original = try Data(contentsOf: URL(fileURLWithPath: pkg + "/ContentInfo.plist"))
        #expect(record == original)
        let attributes = try FileManager.default.attributesOfItem(atPath: s.documents + "/com.example.book/1.0/a.txt")
        #expect((attributes[.posixPermissions] as? Int) == 0o644)
        #expect(try installer.currentVersion(productIdentifier: "com.example.book") == "1.0")
        #expect(try installer.listVersions(productIdentifier: "com.example.book") == ["1.0"])
    }

    @Test func sameVersionSameFilesIsUnchanged() throws {
        let s = try Scratch()
        let pkg = try s.content("p1", id: "com.example.book", version: "1.0", files: ["a.txt": "A"], links: ["l": "a.txt"])
        let installer = Installer(documents: s.documents)
        _ = try installer.install(pkg)
        let report = try installer.install(pkg)
        #expect(report.status == .unchanged)
        #expect(report.previousVersion == "1.0")
        #expect(report.diagnostics.isEmpty)
    }

    @Test func upgradeUpdatesRecord() throws {
        let s = try Scratch()
        let installer = Installer(documents: s.documents)
        _ = try installer.install(try s.content("p1", id: "com.example.book", version: "1.0", files: ["a.txt": "A"]))
        let report = try installer.install(try s.content("p2", id: "com.example.book", version: "1.1", files: ["a.txt": "A2"]))
        #expect(report.status == .installed)
        #expect(report.previousVersion == "1.0")
        #expect(try installer.currentVersion(productIdentifier: "com.example.book") == "1.1")
        #expect(try installer.listVersions(productIdentifier: "com.example.book") == ["1.1", "1.0"])
        #expect(s.text("Documents/com.example.book/1.1/a.txt") == "A2")
        #expect(s.text("Documents/com.example.book/1.0/a.txt") == "A")
    }

    @Test func downgradeRefusedUnlessAllowed() throws {
        let s = try Scratch()
        let installer = Installer(documents: s.documents)
        let old = try s.content("p1", id: "com.example.book", version: "1.0", files: ["a.txt": "A"])
        _ = try installer.install(try s.content("p2", id: "com.example.book", version: "2.0", files: ["a.txt": "B"]))
        let refused = try installer.install(old)
        #expect(refused.status == .refused)
        #expect(refused.diagnostics.contains { $0.code == .versionNotBumped && $0.message.contains("downgrade") })
        #expect(s.list("Documents/com.example.book").contains("1.0") == false)
        #expect(try installer.currentVersion(productIdentifier: "com.example.book") == "2.0")

        let allowed = try installer.install(old, options: InstallOptions(allowDowngrade: true))
        #expect(allowed.status == .installed)
        #expect(try installer.currentVersion(productIdentifier: "com.example.book") == "1.0")
        #expect(s.text("Documents/com.example.book/1.0/a.txt") == "A")
    }

    @Test func sameVersionDifferentFilesRefusedUnlessForced() throws {
        let s = try Scratch()
        let installer = Installer(documents: s.documents)
        _ = try installer.install(try s.content("p1", id: "com.example.book", version: "1.0", files: ["a.txt": "A", "gone.txt": "G"]))
        let other = try s.content("p2", id: "com.example.book", version: "1.0", files: ["a.txt": "changed"])
        let refused = try installer.install(other)
        #expect(refused.status == .refused)
        #expect(refused.diagnostics.map(\.code) == [.versionNotBumped])
        #expect(s.text("Documents/com.example.book/1.0/a.txt") == "A")

        let forced = try installer.install(other, options: InstallOptions(force: true))
        #expect(forced.status == .installed)
        #expect(s.text("Documents/com.example.book/1.0/a.txt") == "changed")
        #expect(s.text("Documents/com.example.book/1.0/gone.txt") == nil)
        #expect(s.list("Documents/com.example.book") == [".lock", "1.0", "ContentInfo.plist"])
    }

    @Test func keepPrunesOldVersions() throws {
        let s = try Scratch()
        let installer = Installer(documents: s.documents)
        for (index, version) in ["1.0", "1.1", "1.2"].enumerated() {
            _ = try installer.install(try s.content("p\(index)", id: "com.example.book", version: version, files: ["a.txt": version]))
        }
        let report = try installer.install(try s.content("p9", id: "com.example.book", version: "2.0", files: ["a.txt": "2"]),
                                           options: InstallOptions(keep: 2))
        #expect(report.status == .installed)
        #expect(report.removedVersions.sorted() == ["1.0", "1.1"])
        #expect(try installer.listVersions(productIdentifier: "com.example.book") == ["2.0", "1.2"])
        #expect(try installer.prune(productIdentifier: "com.example.book", keep: 1) == ["1.2"])
        #expect(try installer.listVersions(productIdentifier: "com.example.book") == ["2.0"])
    }

    @Test func stagingLeftoversRemoved() throws {
        let s = try Scratch()
        let installer = Installer(documents: s.documents)
        _ = try installer.install(try s.content("p1", id: "com.example.book", version: "1.0", files: ["a.txt": "A"]))
        let leftover = s.documents + "/com.example.book/.staging-abc123/deep"
        try FileManager.default.createDirectory(atPath: leftover, withIntermediateDirectories: true)
        try Data("x".utf8).write(to: URL(fileURLWithPath: leftover + "/f"))
        _ = try installer.install(try s.content("p2", id: "com.example.book", version: "1.1", files: ["a.txt": "B"]))
        #expect(s.list("Documents/com.example.book") == [".lock", "1.0", "1.1", "ContentInfo.plist"])
    }

    @Test func invalidPackageWritesNothing() throws {
        let s = try Scratch()
        let pkg = try s.content("bad", id: "com.example.book", version: "01", files: ["a.txt": "A"])
        let report = try Installer(documents: s.documents).install(pkg)
        #expect(report.status == .refused)
        #expect(report.diagnostics.contains { $0.code == .invalidContentVersion })
        #expect(!FileManager.default.fileExists(atPath: s.documents))
    }

    @Test func productIdentifierMismatchRefused() throws {
        let s = try Scratch()
        let pkg = try s.content("p1", id: "com.example.book", version: "1.0", files: ["a.txt": "A"])
        let report = try Installer(documents: s.documents).install(pkg, options: InstallOptions(expectedProductIdentifier: "com.other"))
        #expect(report.status == .refused)
        #expect(report.diagnostics.contains { $0.code == .productIdentifierMismatch })
    }

    @Test func symlinkedProductFolderRefused() throws {
        let s = try Scratch()
        let elsewhere = s.root + "/elsewhere"
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: s.documents, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: s.documents + "/com.example.book", withDestinationPath: elsewhere)
        #expect(throws: InstallError.self) {
            try Installer(documents: s.documents).install(try s.content("p1", id: "com.example.book", version: "1.0", files: ["a.txt": "A"]))
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere).isEmpty)
    }

    @Test func sizeLimitRefused() throws {
        let s = try Scratch()
        let pkg = try s.content("p1", id: "com.example.book", version: "1.0", files: ["a.txt": String(repeating: "x", count: 5000)])
        let report = try Installer(documents: s.documents).install(pkg, options: InstallOptions(limits: PackageLimits(maxSize: 1000)))
        #expect(report.status == .refused)
        #expect(report.diagnostics.contains { $0.code == .sizeLimit })
    }
    @Test func concurrentInstallsAreSerialised() throws {
        let s = try Scratch()
        let versions = ["1.0", "1.1", "1.2", "1.3"]
        let packages = try versions.enumerated().map { try s.content("p\($0.offset)", id: "com.example.book", version: $0.element, files: ["a.txt": $0.element, "b/c.txt": "c"]) }
        let failures = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: packages.count) { index in
            let report = try? Installer(documents: s.documents).install(packages[index], options: InstallOptions(allowDowngrade: true))
            if report?.status != .installed { failures.withLock { $0 += 1 } }
        }
        #expect(failures.withLock { $0 } == 0)
        let installer = Installer(documents: s.documents)
        #expect(try installer.listVersions(productIdentifier: "com.example.book").sorted() == versions)
        for version in versions { #expect(s.text("Documents/com.example.book/\(version)/a.txt") == version) }
        let current = try #require(try installer.currentVersion(productIdentifier: "com.example.book"))
        #expect(versions.contains(current))
        #expect(s.list("Documents/com.example.book").filter { $0.hasPrefix(".staging-") }.isEmpty)
    }
    @Test func interruptedForceReplacementRecovered() throws {
        let s = try Scratch()
        let installer = Installer(documents: s.documents)
        _ = try installer.install(try s.content("p1", id: "com.example.book", version: "1.0", files: ["a.txt": "A"]))
        // As if killed between "rename old away" and "rename new in".
        let product = s.documents + "/com.example.book"
        try FileManager.default.moveItem(atPath: product + "/1.0", toPath: product + "/.replacing-xyz")
        let report = try installer.install(try s.content("p2", id: "com.example.book", version: "1.1", files: ["a.txt": "B"]))
        #expect(report.status == .installed)
        #expect(s.text("Documents/com.example.book/1.0/a.txt") == "A")
        #expect(s.list("Documents/com.example.book") == [".lock", "1.0", "1.1", "ContentInfo.plist"])
    }

    /// `--force` of 1.0.0 over an installed 1.0: one folder, and the record names it.
    @Test func forcedReinstallUnderAnotherSpellingKeepsRecordAndFolderInAgreement() throws {
        let s = try Scratch()
        let installer = Installer(documents: s.documents)
        _ = try installer.install(try s.content("p1", id: "com.example.book", version: "1.0", files: ["a.txt": "A"]))
        let other = try s.content("p2", id: "com.example.book", version: "1.0.0", files: ["a.txt": "B"])
        let report = try installer.install(other, options: InstallOptions(force: true))
        #expect(report.status == .installed)
        #expect(s.list("Documents/com.example.book") == [".lock", "1.0.0", "ContentInfo.plist"])
        #expect(try installer.currentVersion(productIdentifier: "com.example.book") == "1.0.0")
        #expect(s.text("Documents/com.example.book/1.0.0/a.txt") == "B")
        #expect(report.installedPath == s.documents + "/com.example.book/1.0.0")
    }

    /// A version installed but no longer current (after a downgrade) made current again by a
    /// package that spells its version differently: renamed, and the record names it.
    @Test func reinstatedVersionTakesThePackagesSpelling() throws {
        let s = try Scratch()
        let installer = Installer(documents: s.documents)
        _ = try installer.install(try s.content("p1", id: "com.example.book", version: "2.0", files: ["a.txt": "A"]))
        _ = try installer.install(try s.content("p2", id: "com.example.book", version: "1.0", files: ["a.txt": "old"]),
                                  options: InstallOptions(allowDowngrade: true))
        let report = try installer.install(try s.content("p3", id: "com.example.book", version: "2.0.0", files: ["a.txt": "A"]))
        #expect(report.status == .installed)
        #expect(s.list("Documents/com.example.book") == [".lock", "1.0", "2.0.0", "ContentInfo.plist"])
        #expect(try installer.currentVersion(productIdentifier: "com.example.book") == "2.0.0")
    }

    /// A run killed after making `1.0.0` current but before removing the `1.0` it replaced leaves
    /// two folders of one version; the next run removes the one the record does not name.
    @Test func equalVersionLeftoverIsRemoved() throws {
        let s = try Scratch()
        let installer = Installer(documents: s.documents)
        _ = try installer.install(try s.content("p1", id: "com.example.book", version: "1.0.0", files: ["a.txt": "new"]))
        try FileManager.default.createDirectory(atPath: s.documents + "/com.example.book/1.0", withIntermediateDirectories: false)
        try s.write("Documents/com.example.book/1.0/a.txt", "old")
        _ = try installer.install(try s.content("p2", id: "com.example.book", version: "1.1", files: ["a.txt": "newer"]))
        #expect(s.list("Documents/com.example.book") == [".lock", "1.0.0", "1.1", "ContentInfo.plist"])
    }
}
