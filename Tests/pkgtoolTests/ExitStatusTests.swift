import ArgumentParser
import Foundation
import PkgKit
import Testing
@testable import pkgtool
import TestSupport

/// The one mapping from what a command ends with to its exit status (`ExitStatus.swift`): every
/// report and every error states an `Outcome`, and the outcome gives the status.
@Suite(.offThePool) struct ExitStatusTests {
    private struct Unforeseen: Error {}

    /// The status of a run `error` stopped, as `CommandReporting.failure` decides it; nil for what
    /// the argument parser says itself.
    private func status(_ error: any Error) -> pkgtool.ExitStatus? {
        CommandFailure.diagnosable(error).map { ExitStatus(Outcome($0.disposition)) }
    }

    @Test func outcomesAreTheDocumentedNumbers() {
        #expect(Outcome.allCases.map { ExitStatus($0).code } == [0, 3, 1, 2])
    }

    @Test func errorsMapByTheirDisposition() {
        #expect(status(ReadError.io(path: "a.pkg", "No such file or directory")) == .failed)
        #expect(status(ReadError.unreadable(path: nil, "not a package")) == .refused)
        #expect(status(InstallError.io(path: "Documents", "Read-only file system")) == .failed)
        #expect(status(WriteError.io(path: "x.pkg", "No space left on device")) == .failed)
        #expect(status(CreateFailure.nothingToBump(.minor)) == .refused)
        #expect(status(KeyFileError.refused(path: "k.pub.pem", "does not match k.pem")) == .refused)
        #expect(status(Unforeseen()) == .failed)
        #expect(status(ValidationError("--level must be 1 to 9")) == nil)
        #expect(status(ExitCode(130)) == nil)
        #expect(status(OperationCancelled()) == nil)
    }

    /// A command's report of the error that stopped it says what its exit status says: refused
    /// for a refusal, failed for a failure (convert, publish and extract said failed for both,
    /// create refused for both).
    @Test func theReportOfAnErrorKeepsItsDisposition() throws {
        let refusal = CommandFailure(.badSignature, path: "k.pub.pem", "does not match")
        let failure = CommandFailure(.ioError, path: "out", "Read-only file system")
        let commands: [(any CommandReporting)] = try [
            Pkgtool.parseAsRoot(["keygen", "--out", "k"]), Pkgtool.parseAsRoot(["convert", "a.pkg", "--to", "background-assets", "-o", "out"]),
            Pkgtool.parseAsRoot(["publish", "a.pkg", "--to", "site"]), Pkgtool.parseAsRoot(["extract", "a.pkg", "--documents", "Documents"]),
            Pkgtool.parseAsRoot(["sync", "http://localhost/", "--documents", "Documents", "--product", "p"]),
            Pkgtool.parseAsRoot(["validate", "a.pkg"]), Pkgtool.parseAsRoot(["create", "src"]),
        ].map { try #require($0 as? any CommandReporting) }
        for command in commands {
            #expect(command.outcome(of: failure) == .failed, "\(type(of: command))")
            #expect(command.outcome(of: refusal) == .refused, "\(type(of: command))")
        }
    }

    /// A side that cannot be read for any reason, not only a `ReadError`, makes diff exit 2
    /// (issue 22: a failure of another type left the status at 0, so diff exited 1).
    @Test func diffOfASideThatFailsForAnyReasonExitsTwo() throws {
        let unforeseen = try DiffReport.compare("old.pkg", "new.pkg") { _ in throw Unforeseen() }
        #expect(unforeseen.verdict == .invalid)
        #expect(unforeseen.exitStatus == .failed)
        let missing = try DiffReport.compare("old.pkg", "new.pkg") { throw ReadError.io(path: $0, "No such file or directory") }
        #expect(missing.exitStatus == .failed)
        let damaged = try DiffReport.compare("old.pkg", "new.pkg") { _ in throw ReadError.unreadable(path: nil, "truncated") }
        #expect(damaged.exitStatus == .refused)
    }

    /// Interruption is not a failure of a side: it stops the diff.
    @Test func diffPassesAnInterruptionOn() {
        #expect(throws: OperationCancelled.self) {
            try DiffReport.compare("old.pkg", "new.pkg") { _ in throw OperationCancelled() }
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
        return .stopped(StoppedInstall(CommandFailure(.ioError, path: nil, "")))
    }

    func printText(_ report: ExtractReport, _ output: OutputOptions) {}

    func report(for failure: any DiagnosableError) -> ExtractReport { .stopped(StoppedInstall(failure)) }
}

@Suite(.offThePool) struct AsyncReportingCommandTests {
    @Test func anAsyncCommandNeedsOnlyItsOwnDeclarations() async throws {
        let probe = AsyncProbe()
        let report = try await probe.execute(OutputOptions(), Cancellation())
        #expect(report.exitStatus == .failed)
        #expect(probe.report(for: CommandFailure(.ioError, path: "x", "full")).exitStatus == .failed)
        #expect(probe.interruptionGrace == Interruption.defaultGrace)
    }
}

private extension CommandReporting {
    /// The outcome of this command's report of `error`.
    func outcome(of error: any DiagnosableError) -> Outcome { report(for: error).outcome }
}
