import Foundation
import Testing
import TestSupport
@testable import PkgKit

/// Inputs kept from `make fuzz` (and one from libarchive's own writer), replayed through what
/// the fuzzer drives: every one must be read to a verdict, quickly, with the same findings.
/// A crasher found later goes into Tests/Fixtures/fuzz/ with its expected codes here.
@Suite(.offThePool, .libArchive) struct FuzzRegressionTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/fuzz")

    static let expected: [String: Set<DiagnosticCode>] = [
        "bsdtar-xar-path-twice.pkg": [.duplicateEntry],
        "tgz-damaged-plist.pkg": [.invalidContentInfo, .unreadableArchive],
        "xar-bad-checksum.pkg": [.checksumMismatch],
        "xar-broken-toc.pkg": [.unreadableArchive],
        "xar-header-only.pkg": [.unreadableArchive],
        // Found by the fuzzer: a header claiming a TOC of 2^63 bytes made inspect's heap offset
        // negative and trap. libarchive reads the TOC to its zlib end and accepts the package;
        // pkgtool refuses a header declaring more TOC than it reads (issue 38), whatever follows.
        "xar-huge-toc-length.pkg": [.unreadableArchive],
        "xar-mangled.pkg": [.unreadableArchive],
        // The fuzzer cut off its central directory: a zip that is not whole is refused before
        // libarchive reads its local headers (issue 12).
        "zip-mangled-names.pkg": [.unreadableArchive],
    ]

    /// Every kept input through the fuzzer's own harness (`pkgfuzz` replays without libFuzzer),
    /// install oracle included: nothing outside Documents/<id>/, no staging left, a true record.
    @Test(.timeLimit(.minutes(2))) func harnessReplaysEveryKeptInput() throws {
        let binary = CommandRunner.packageRoot.appendingPathComponent(".build/debug/pkgfuzz").path
        let inputs = try FileManager.default.contentsOfDirectory(atPath: Self.folder.path).sorted().map { Self.folder.appendingPathComponent($0).path }
        let result = try CommandRunner.run(binary, inputs)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.split(separator: "\n").count == inputs.count)
    }

    @Test func everyKeptInputHasAnEntry() throws {
        let files = Set(try FileManager.default.contentsOfDirectory(atPath: Self.folder.path))
        #expect(files == Set(Self.expected.keys))
    }

    @Test(.timeLimit(.minutes(2)), arguments: expected.keys.sorted())
    func replay(_ name: String) throws {
        let path = Self.folder.appendingPathComponent(name).path
        let check = try PackageCheck.run(path, context: RuleContext(purpose: .validate, limits: PackageLimits(maxSize: 8 << 20)))
        #expect(check.isValid() == Self.expected[name]!.isEmpty)
        #expect(Set(check.diagnostics.map(\.code)) == Self.expected[name])
        #expect(check.diagnostics.allSatisfy { !$0.message.contains("\n") })
        // inspect reads the same bytes another way; it must come back too.
        _ = try InspectReport.make(path, limits: PackageLimits(maxSize: 8 << 20), withFiles: true)
    }
}
