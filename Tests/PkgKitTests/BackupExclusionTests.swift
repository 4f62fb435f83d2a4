import Foundation
@testable import PkgKit
@testable import PkgKitInstall
import Testing
import TestSupport

/// Installed version folders kept out of device backups by default (Apple's data storage
/// guidelines), through the seam the installer calls: which folders are marked, when, and none
/// when the app keeps its content in backups. Apple's own marking (`isExcludedFromBackup`) builds
/// on Apple platforms only; here a recording seam stands in for it.
@Suite(.offThePool) struct BackupExclusionTests {
    static let id = "com.example.backup"
    let scratch: Scratch

    init() throws {
        scratch = try Scratch()
    }

    /// Each folder marked, with what it held when it was marked.
    final class Marks: Sendable {
        private let marked = LockedValue<[(path: String, tree: [String: TreeEntry])]>([])
        /// Every mark so far, in order.
        var all: [(path: String, tree: [String: TreeEntry])] { marked.current }
        /// A backup exclusion that records what it marks.
        var exclusion: BackupExclusion {
            BackupExclusion { path in self.marked.withLock { $0.append((path, snapshot(path))) } }
        }
    }

    @Test func eachVersionInstalledIsMarkedWholeBeforeItGoesIntoPlace() throws {
        let v10 = try scratch.package("v10", id: Self.id, version: "1.0", files: ["a.txt": Data("1".utf8), "sub/b.bin": pseudoRandomData(5000)])
        let marks = Marks()
        var options = InstallOptions()
        options.backupExclusion = marks.exclusion
        #expect(options.excludeFromBackup, "on by default")
        let report = try Installer(documents: scratch.documents).install(v10.pkg, options: options)
        #expect(report.status == .installed)
        let mark = try #require(marks.all.first)
        #expect(marks.all.count == 1)
        // The staged folder, complete, marked before its rename: the installed version is the
        // very folder that was marked, never in place unmarked.
        #expect(URL(fileURLWithPath: mark.path).lastPathComponent.hasPrefix(".staging-"))
        #expect(mark.tree == snapshot(v10.contents))
        #expect(snapshot(scratch.documents + "/\(Self.id)/1.0") == mark.tree)
        #expect(!exists(mark.path))
    }

    @Test func keptInBackupsNothingIsMarked() throws {
        let v10 = try scratch.package("v10", id: Self.id, version: "1.0", files: ["a.txt": Data("1".utf8)])
        let marks = Marks()
        var options = InstallOptions()
        options.backupExclusion = marks.exclusion
        options.excludeFromBackup = false
        #expect(try Installer(documents: scratch.documents).install(v10.pkg, options: options).status == .installed)
        #expect(marks.all.isEmpty)
    }

    @Test func aFolderThatCannotBeMarkedIsInstalledAllTheSame() throws {
        let v10 = try scratch.package("v10", id: Self.id, version: "1.0", files: ["a.txt": Data("1".utf8)])
        struct Refused: Error {}
        var options = InstallOptions()
        options.backupExclusion = BackupExclusion { _ in throw Refused() }
        #expect(try Installer(documents: scratch.documents).install(v10.pkg, options: options).status == .installed)
        #expect(readRecord(scratch.documents + "/\(Self.id)")?.version == "1.0")
    }

    @Test func aSyncMarksTheVersionsItInstallsUnlessToldNotTo() async throws {
        var files: [String: Data] = ["big.bin": pseudoRandomData(300_000, seed: 1), "a.txt": Data("1".utf8)]
        let v10 = try scratch.package("v10", id: Self.id, version: "1.0", files: files)
        files["a.txt"] = Data("2".utf8)
        let v11 = try scratch.package("v11", id: Self.id, version: "1.1", files: files)
        let publisher = Publisher(destination: scratch.path("pub"))
        #expect(try publisher.publish([v10.pkg]).status == .published)
        let client = SyncClient(catalogURL: URL(fileURLWithPath: scratch.path("pub/catalog.json")), documents: scratch.documents)
        let marks = Marks()
        var options = SyncClient.Options(products: [Self.id], trust: .unsigned)
        options.backupExclusion = marks.exclusion
        #expect(options.excludeFromBackup, "on by default")
        #expect(try await client.sync(options).products.first?.status == .installed)
        // The download in progress (which may wait days to be resumed), then the version.
        let product = scratch.documents + "/\(Self.id)"
        #expect(marks.all.map(\.path).first == product + "/.download-1.0.part")
        #expect(marks.all.dropFirst().map(\.tree) == [snapshot(v10.contents)])
        // A delta update's new version is marked as well.
        #expect(try publisher.publish([v11.pkg]).status == .published)
        let update = try #require(try await client.sync(options).products.first)
        #expect(update.status == .installed && update.delta)
        #expect(marks.all.count == 3 && marks.all.last?.tree == snapshot(v11.contents))
        #expect(marks.all.allSatisfy { !$0.path.hasSuffix("/" + Installer.recordName) && !$0.path.hasSuffix(Installer.lockName) })
        // Kept in backups: an app that says so gets no mark on what it installs.
        let kept = Marks()
        var keeping = SyncClient.Options(products: [Self.id], trust: .unsigned)
        keeping.backupExclusion = kept.exclusion
        keeping.excludeFromBackup = false
        let other = SyncClient(catalogURL: URL(fileURLWithPath: scratch.path("pub/catalog.json")), documents: scratch.path("Other"))
        #expect(try await other.sync(keeping).products.first?.status == .installed)
        #expect(kept.all.isEmpty)
    }
}
