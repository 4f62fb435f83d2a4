import ArgumentParser
import Foundation
import PkgKit
import Testing
@testable import pkgtool

/// The one mapping from what a command ends with to its exit status (`ExitStatus.swift`): library
/// errors by their disposition, reports by what they say, and any other error as a failure.
@Suite(.offThePool) struct ExitStatusTests {
    private struct Unforeseen: Error {}

    @Test func errorsMapByTheirDisposition() {
        #expect(ExitStatus(error: ReadError.io(path: "a.pkg", "No such file or directory")) == .failed)
        #expect(ExitStatus(error: ReadError.unreadable(path: nil, "not a package")) == .refused)
        #expect(ExitStatus(error: InstallError.io(path: "Documents", "Read-only file system")) == .failed)
        #expect(ExitStatus(error: WriteError.io(path: "x.pkg", "No space left on device")) == .failed)
        #expect(ExitStatus(error: CreateFailure.nothingToBump(.minor)) == .refused)
        #expect(ExitStatus(error: ValidationError("--level must be 1 to 9")) == .usage)
        #expect(ExitStatus(error: ExitCode(130)) == .interrupted(by: SIGINT))
        #expect(ExitStatus(error: Unforeseen()) == .failed)
    }

    /// A side that cannot be read for any reason, not only a `ReadError`, makes diff exit 2
    /// (issue 22: a failure of another type left the status at 0, so diff exited 1).
    @Test func diffOfASideThatFailsForAnyReasonExitsTwo() throws {
        let unforeseen = try Pkgtool.Diff.compare("old.pkg", "new.pkg") { _ in throw Unforeseen() }
        #expect(unforeseen.verdict == .invalid)
        #expect(unforeseen.exitStatus == .failed)
        let missing = try Pkgtool.Diff.compare("old.pkg", "new.pkg") { throw ReadError.io(path: $0, "No such file or directory") }
        #expect(missing.exitStatus == .failed)
        let damaged = try Pkgtool.Diff.compare("old.pkg", "new.pkg") { _ in throw ReadError.unreadable(path: nil, "truncated") }
        #expect(damaged.exitStatus == .refused)
    }

    /// Interruption is not a failure of a side: it stops the diff.
    @Test func diffPassesAnInterruptionOn() {
        #expect(throws: OperationCancelled.self) {
            try Pkgtool.Diff.compare("old.pkg", "new.pkg") { _ in throw OperationCancelled() }
        }
    }
}

/// A command on the async road that sync takes, compiled here so that the road
/// stays open for the next: the declarations it asks for are all a command adds.
private struct AsyncProbe: AsyncReportingCommand {
    static let configuration = CommandConfiguration(commandName: "probe")
    @ParentCommand var root: Pkgtool
    @OptionGroup var outputOptions: OutputOptions
    @OptionGroup var keep: KeepOptions
    var subject: String { "probe" }
    var leftWhenInterrupted: String { "nothing was changed" }

    func execute(_ output: OutputOptions, _ cancellation: Cancellation) async throws -> ExtractReport {
        try cancellation.check()
        return .failed(FailedInstall(diagnostics: []))
    }

    func printText(_ report: ExtractReport, _ output: OutputOptions) {}

    func report(for failure: Diagnostic) -> ExtractReport { .failed(FailedInstall(diagnostics: [failure])) }
}

@Suite(.offThePool) struct AsyncReportingCommandTests {
    @Test func anAsyncCommandNeedsOnlyItsOwnDeclarations() async throws {
        let probe = AsyncProbe()
        let report = try await probe.execute(OutputOptions(), Cancellation())
        #expect(report.exitStatus == .failed)
        #expect(probe.report(for: Diagnostic(.ioError, path: "x", "full")).exitStatus == .failed)
        #expect(probe.interruptionGrace == Interruption.defaultGrace)
    }
}
