import Foundation
import Testing
import TestSupport
@testable import PkgKit

/// Inputs kept from `make fuzz` (and one from libarchive's own writer), replayed through what
/// the fuzzer drives: every one must be read to a verdict, quickly, with the same findings.
/// A crasher found later goes into Tests/Fixtures/fuzz/ with its expected codes here (one of a
/// delivery target, named after it, in `delivery`).
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

    /// Inputs kept from the delivery targets (`bash scripts/fuzz.sh delta`…), named after their
    /// target, each with what it once found; their oracles must hold on every one.
    static let delivery: [String: String] = [
        // Found by the delta target in 8 s (about 300 inputs) at 6a87250: the TOC without a
        // checksum for one changed file, and a server that inverts one byte of that file's data
        // in the first range. The sync installed the altered file (issue 38).
        "delta-unverified-file-altered": "delta",
    ]

    /// The replaying pkgfuzz (`swift build` makes it without libFuzzer).
    static let binary = CommandRunner.packageRoot.appendingPathComponent(".build/debug/pkgfuzz").path

    /// Every kept input of the package target through the fuzzer's own harness (`pkgfuzz`
    /// replays without libFuzzer), install oracle included: nothing outside Documents/<id>/, no
    /// staging left, a true record.
    @Test(.timeLimit(.minutes(2))) func harnessReplaysEveryKeptInput() throws {
        let inputs = Self.expected.keys.sorted().map { Self.folder.appendingPathComponent($0).path }
        let result = try CommandRunner.run(Self.binary, inputs)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.split(separator: "\n").count == inputs.count)
    }

    /// Every kept input of a delivery target through its target, oracle included: for the delta
    /// target, the sync installs exactly the published package, or nothing.
    @Test(.timeLimit(.minutes(2)), arguments: Set(delivery.values).sorted())
    func deliveryTargetReplaysItsKeptInputs(_ target: String) throws {
        let inputs = Self.delivery.filter { $0.value == target }.keys.sorted().map { Self.folder.appendingPathComponent($0).path }
        let result = try CommandRunner.run(Self.binary, ["--target=\(target)"] + inputs, environment: ["SWIFT_BACKTRACE": "enable=no"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.split(separator: "\n").filter { $0.hasPrefix("ok ") }.count == inputs.count, "\(result.stdout)")
    }

    @Test func everyKeptInputHasAnEntry() throws {
        let files = Set(try FileManager.default.contentsOfDirectory(atPath: Self.folder.path))
        #expect(files == Set(Self.expected.keys).union(Self.delivery.keys))
        #expect(Self.delivery.allSatisfy { $0.key.hasPrefix($0.value + "-") })
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
