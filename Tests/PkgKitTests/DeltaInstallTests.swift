import Foundation
import Testing
import TestSupport
@testable import PkgKit

/// The delta machinery without a network: a sparse copy of the new package holding only its header,
/// TOC and the heap ranges the plan fetches, completed by files of the installed version, installs
/// exactly the tree a full install does.
@Suite(.offThePool) struct DeltaInstallTests {
    static let id = "com.example.delta"

    /// Copies `ranges` of `package` into a sparse file of the same size at `sparse`.
    static func assemble(_ package: String, into sparse: String, ranges: [Range<Int64>]) throws {
        let source = try FileHandle(forReadingFrom: URL(fileURLWithPath: package))
        defer { try? source.close() }
        #expect(FileManager.default.createFile(atPath: sparse, contents: nil))
        let target = try FileHandle(forWritingTo: URL(fileURLWithPath: sparse))
        defer { try? target.close() }
        let size = try FileManager.default.attributesOfItem(atPath: package)[.size] as! Int
        try target.truncate(atOffset: UInt64(size))
        for range in ranges {
            try source.seek(toOffset: UInt64(range.lowerBound))
            let bytes = try source.read(upToCount: Int(range.count)) ?? Data()
            try target.seek(toOffset: UInt64(range.lowerBound))
            try target.write(contentsOf: bytes)
        }
    }

    @Test func deltaInstallEqualsFullInstall() throws {
        let s = try Scratch()
        let big = randomData(300_000), kept = randomData(50_000)
        let v1 = try s.package("v1", id: Self.id, version: "1.0", files: [
            "a.txt": Data("one\n".utf8), "media/big.bin": big, "same.txt": Data(String(repeating: "same ", count: 2000).utf8),
            "sub/keep.bin": kept, "edited.bin": randomData(40_000),
        ])
        let v2 = try s.package("v2", id: Self.id, version: "1.1", files: [
            "a.txt": Data("two\n".utf8), "media/big.bin": big, "moved/same.txt": Data(String(repeating: "same ", count: 2000).utf8),
            "new.txt": Data("new\n".utf8), "edited.bin": try Data(contentsOf: URL(fileURLWithPath: v1.contents + "/edited.bin")),
            "empty.txt": Data(),
        ])
        let installer = Installer(documents: s.documents)
        #expect(try installer.install(v1.pkg).status == .installed)
        // An installed file edited after install must not be reused: its bytes no longer match.
        try s.write("Documents/\(Self.id)/1.0/edited.bin", randomData(40_000))

        // Plan from the TOC alone, as a client that fetched only the header and TOC would.
        let sparse = s.path("Documents/\(Self.id)/.delta-1.1.part")
        let packageSize = Int64(try FileManager.default.attributesOfItem(atPath: v2.pkg)[.size] as! Int)
        let header = try FileHandle(forReadingFrom: URL(fileURLWithPath: v2.pkg)).read(upToCount: 28)!
        let tocLength = header[8..<16].reduce(Int64(0)) { $0 << 8 | Int64($1) }
        try Self.assemble(v2.pkg, into: sparse, ranges: [0 ..< 28 + tocLength + 20])
        let (toc, wanted, memo) = try #require(DeltaPlan.wantedFiles(inTOCOf: sparse))
        let product = try #require(try ProductFolder.open(documents: s.documents, identifier: Self.id, create: false))
        let sizes = DeltaPlan.sizes(of: wanted)
        let installed = try InstalledTree.scan(product, version: "1.0") { sizes.contains($0) }
        let plan = try DeltaPlan.make(wanted: wanted, heapStart: toc.heapStart, packageSize: packageSize,
                                               installed: installed)
        #expect(Set(plan.reused.keys.map(\.string)) == ["Contents/media/big.bin", "Contents/moved/same.txt"])
        // Changed: a.txt, new.txt and edited.bin (and ContentInfo.plist, always fetched).
        #expect(plan.fetchedFiles == 3)
        #expect(plan.fetchBytes < 50_000, "fetching \(plan.fetchBytes) bytes")
        try Self.assemble(v2.pkg, into: sparse, ranges: [0 ..< 28 + tocLength + 20] + plan.fetch)

        // The install takes the TOC as the plan parsed it (both of its passes).
        var options = InstallOptions(expectedProductIdentifier: Self.id, expectedContentVersion: "1.1")
        options.reused = plan.reused
        let report = try installer.install(.delta(sparse, shownAs: "v2.pkg", name: "1.1.pkg", reusedEntries: plan.reusedEntries,
                                                  memo: memo), into: product, options: options)
        #expect(report.status == .installed, "\(report.diagnostics)")
        #expect(report.fileCount == 6)
        #expect(memo.timesTaken == 2, "the first look and the full pass both took the TOC the plan parsed")
        let deltaTree = snapshot(s.documents + "/\(Self.id)/1.1")
        #expect(differences(s.documents + "/\(Self.id)/1.1", expected: snapshot(v2.contents)).isEmpty)

        // The same package downloaded whole and installed elsewhere gives the same tree.
        let other = Installer(documents: s.path("Full"))
        #expect(try other.install(v2.pkg).status == .installed)
        #expect(snapshot(s.path("Full/\(Self.id)/1.1")) == deltaTree)
        #expect(FileManager.default.contents(atPath: s.documents + "/\(Self.id)/ContentInfo.plist")
                == FileManager.default.contents(atPath: s.path("Full/\(Self.id)/ContentInfo.plist")))

        // Reused files share the installed version's data (hard links).
        var old = stat(), new = stat()
        #expect(lstat(s.documents + "/\(Self.id)/1.0/media/big.bin", &old) == 0 && lstat(s.documents + "/\(Self.id)/1.1/media/big.bin", &new) == 0)
        #expect(old.st_ino == new.st_ino)
    }

    /// A reused file changed between planning and installing is not installed: the install fails
    /// and the previous version stays current.
    @Test func reusedFileChangedAfterPlanningFailsTheInstall() throws {
        let s = try Scratch()
        let big = randomData(100_000)
        let v1 = try s.package("v1", id: Self.id, version: "1.0", files: ["big.bin": big, "a.txt": Data("1".utf8)])
        let v2 = try s.package("v2", id: Self.id, version: "1.1", files: ["big.bin": big, "a.txt": Data("2".utf8)])
        let installer = Installer(documents: s.documents)
        #expect(try installer.install(v1.pkg).status == .installed)
        let sparse = s.path("Documents/\(Self.id)/.delta-1.1.part")
        let size = Int64(try FileManager.default.attributesOfItem(atPath: v2.pkg)[.size] as! Int)
        try Self.assemble(v2.pkg, into: sparse, ranges: [0 ..< size])
        let (toc, wanted, _) = try #require(DeltaPlan.wantedFiles(inTOCOf: sparse))
        let product = try #require(try ProductFolder.open(documents: s.documents, identifier: Self.id, create: false))
        let installed = try InstalledTree.scan(product, version: "1.0")
        let plan = try DeltaPlan.make(wanted: wanted, heapStart: toc.heapStart, packageSize: size, installed: installed)
        #expect(plan.reused.count == 1)
        // Same size, other bytes: only the identity check can notice.
        try s.write("Documents/\(Self.id)/1.0/big.bin", randomData(100_000))
        #expect(throws: InstallError.self) {
            var options = InstallOptions()
            options.reused = plan.reused
            _ = try installer.install(.delta(sparse, shownAs: "v2.pkg", name: "1.1.pkg", reusedEntries: plan.reusedEntries), into: product, options: options)
        }
        #expect(readRecord(s.documents + "/\(Self.id)")?.version == "1.0")
        #expect(stagingLeftovers(s.documents + "/\(Self.id)").isEmpty)
        #expect(!exists(s.documents + "/\(Self.id)/1.1"))
    }

    /// A delta sync judges its package once, on the full pass (`judgesOnce`): no first look reads
    /// the TOC again, and the catalog's identifier and version stand in until the package's own
    /// plist is read.
    @Test func aDeltaJudgedOnceInstallsTheSameTree() throws {
        let (s, product, delta, memo, v2, reused) = try Self.plannedDelta()
        var options = InstallOptions(expectedProductIdentifier: Self.id, expectedContentVersion: "1.1")
        options.judgesOnce = true
        options.reused = reused
        let report = try Installer(documents: s.documents).install(delta, into: product, options: options)
        #expect(report.status == .installed, "\(report.diagnostics)")
        #expect(memo.timesTaken == 1, "only the full pass took the TOC the plan parsed")
        #expect(report.installedPath == s.documents + "/\(Self.id)/1.1")
        #expect(readRecord(s.documents + "/\(Self.id)")?.version == "1.1")
        #expect(differences(s.documents + "/\(Self.id)/1.1", expected: snapshot(v2.contents)).isEmpty)
    }

    /// Judged once, a package that breaks a rule (here: not the version its catalog entry says)
    /// is still refused before anything goes into place, its staging folder removed.
    @Test func aDeltaJudgedOnceStillRefusesWhatBreaksARule() throws {
        let (s, product, delta, _, _, reused) = try Self.plannedDelta()
        var options = InstallOptions(expectedProductIdentifier: Self.id, expectedContentVersion: "1.2")
        options.judgesOnce = true
        options.reused = reused
        let report = try Installer(documents: s.documents).install(delta, into: product, options: options)
        #expect(report.status == .refused)
        #expect(report.diagnostics.map(\.code).contains(.contentVersionMismatch), "\(report.diagnostics)")
        #expect(readRecord(s.documents + "/\(Self.id)")?.version == "1.0")
        #expect(stagingLeftovers(s.documents + "/\(Self.id)").isEmpty)
        #expect(!exists(s.documents + "/\(Self.id)/1.1") && !exists(s.documents + "/\(Self.id)/1.2"))
    }

    /// A package whose table of contents only libarchive reads cannot be installed from a sparse
    /// copy: the reader says so, and the delta's source words what to do about it.
    @Test func aCopyOnlyLibarchiveReadsIsToBeDownloadedWhole() throws {
        let s = try Scratch()
        let copy = try XarReaderTests.bzip2Package(in: s)
        let delta = PackageSource.delta(copy, shownAs: "https://example.com/1.1.pkg", name: "1.1.pkg", reusedEntries: [])
        #expect(throws: ReadError.unreadable(path: nil, "the package's table of contents is not one pkgtool reads itself: download it whole")) {
            _ = try delta.open(PackageLimits())
        }
    }

    /// 1.0 installed, and the sparse copy of a 1.1 that keeps one of its files, with the plan's
    /// ranges fetched: what a delta sync hands the installer.
    static func plannedDelta() throws -> (Scratch, ProductFolder, PackageSource, XarTableMemo, (pkg: String, contents: String),
                                          reused: [ArchivePath: InstalledFile]) {
        let s = try Scratch()
        let big = randomData(200_000)
        let v1 = try s.package("v1", id: Self.id, version: "1.0", files: ["big.bin": big, "a.txt": Data("1".utf8)])
        let v2 = try s.package("v2", id: Self.id, version: "1.1", files: ["big.bin": big, "a.txt": Data("2".utf8)])
        #expect(try Installer(documents: s.documents).install(v1.pkg).status == .installed)
        let sparse = s.path("Documents/\(Self.id)/.delta-1.1.part")
        let size = Int64(try FileManager.default.attributesOfItem(atPath: v2.pkg)[.size] as! Int)
        let header = try FileHandle(forReadingFrom: URL(fileURLWithPath: v2.pkg)).read(upToCount: 28)!
        let tocEnd = 28 + header[8..<16].reduce(Int64(0)) { $0 << 8 | Int64($1) } + 20
        try assemble(v2.pkg, into: sparse, ranges: [0 ..< tocEnd])
        let (toc, wanted, memo) = try #require(DeltaPlan.wantedFiles(inTOCOf: sparse))
        let product = try #require(try ProductFolder.open(documents: s.documents, identifier: Self.id, create: false))
        let plan = try DeltaPlan.make(wanted: wanted, heapStart: toc.heapStart, packageSize: size,
                                               installed: try InstalledTree.scan(product, version: "1.0"))
        #expect(plan.reused.count == 1)
        try assemble(v2.pkg, into: sparse, ranges: [0 ..< tocEnd] + plan.fetch)
        let delta = PackageSource.delta(sparse, shownAs: "v2.pkg", name: "1.1.pkg", reusedEntries: plan.reusedEntries, memo: memo)
        return (s, product, delta, memo, v2, plan.reused)
    }
}
