import Foundation
import PkgKit
import Testing
import TestSupport
@testable import pkgtool

/// Advice fits the command that prints it: PkgKit's hints are worded with the flags of that
/// command, and never with a flag it lacks (issue 29 item 9, issue 30 item 5).
@Suite(.offThePool) struct HintWordingTests {
    /// validate has no `--bump`: it says which version would do; create, which has, says `--bump`.
    @Test func versionAdviceFitsTheCommand() throws {
        let scratch = try Scratch()
        let pkg = try scratch.package("p", version: "1.3", text: ["a.txt": "a"])
        let validate = try CommandRunner.pkgtool(["validate", pkg, "--previous-version", "1.3"])
        #expect(validate.status == 1)
        #expect(validate.stderr.contains("error[version-not-bumped] ContentInfo.plist: ContentVersion 1.3 is not greater than the previous 1.3: raise it (e.g. to 1.4)"),
                "\(validate.stderr)")
        #expect(!validate.stderr.contains("--bump"), "\(validate.stderr)")
        let json = try CommandRunner.pkgtool(["validate", pkg, "--previous-version", "1.3", "--json"])
        #expect(json.stdout.contains("raise it (e.g. to 1.4)") && !json.stdout.contains("--bump"), "\(json.stdout)")

        let create = try CommandRunner.pkgtool(["create", scratch.path("src-p"), "--previous", pkg, "-o", scratch.path("q.pkg")])
        #expect(create.status == 1)
        #expect(create.stderr.contains("is not greater than the previous 1.3: raise it (e.g. --bump minor)"), "\(create.stderr)")
        let createJSON = try CommandRunner.pkgtool(["create", scratch.path("src-p"), "--previous", pkg, "-o", scratch.path("q.pkg"), "--json"])
        #expect(createJSON.stdout.contains("raise it (e.g. --bump minor)"), "\(createJSON.stdout)")
    }

    /// The same hint, worded for each command: a flag only where the command has it, nothing
    /// for advice that is only an option the command lacks.
    @Test func eachCommandWordsHintsWithItsOwnFlags() {
        let installed = Diagnostic(.versionNotBumped, path: nil,
                                   words: "version 1.0 is already installed with different files: bump ContentVersion\(hint: .force)")
        #expect(installed.message(in: HintWording.wording(for: Pkgtool.Extract.self))
                == "version 1.0 is already installed with different files: bump ContentVersion, or pass --force to replace it")
        #expect(installed.message(in: HintWording.wording(for: Pkgtool.Sync.self))
                == "version 1.0 is already installed with different files: bump ContentVersion")
        let size = Diagnostic(.sizeLimit, path: nil, words: "too big: \(hint: .raiseSizeLimit)")
        #expect(size.message(in: HintWording.wording(for: Pkgtool.Sync.self)) == "too big: raise --max-size")
        #expect(size.message(in: HintWording.wording(for: Pkgtool.Publish.self)) == "too big: raise the size limit")
        let signature = Diagnostic(.badSignature, path: nil, words: "is missing: \(hint: .signCatalog)")
        #expect(signature.message(in: HintWording.wording(for: Pkgtool.Sync.self)) == "is missing: publish with --sign KEY.pem")
        #expect(signature.message == "is missing: sign the catalog when publishing")
    }

    /// sync's text names its flag for deltas turned off; its JSON keeps the library's words.
    @Test func fullDownloadReasonIsWordedForSync() {
        #expect(SyncPlan.FullDownloadReason.noDelta.words == "--no-delta")
        #expect(SyncPlan.FullDownloadReason.serverIgnoresRange.words == "server ignores Range")
    }
}
