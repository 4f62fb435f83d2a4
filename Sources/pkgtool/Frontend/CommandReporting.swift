import ArgumentParser
import PkgKitDiagnostics
import PkgKit

/// What every command whose outcome is one report declares, whether its work is synchronous
/// (`ReportingCommand`) or async (`AsyncReportingCommand`); both run the same road:
///
/// 1. the work runs under `Interruption.run`, so Ctrl-C and SIGTERM say what was left as it was
///    and exit 130 / 143;
/// 2. its report is printed: with `--json` (before or after the command name) as one JSON
///    document on stdout, else by `printText`;
/// 3. the process exits with the status of the report's `outcome` (`ExitStatus.swift`).
///
/// A thrown error takes the same road: a usage error (`usageProblem`) is said as the argument
/// parser says one (exit 64); any other becomes a `DiagnosableError`, said as the command's report
/// of it (`report(for:)`) with `--json`, or as one line naming `subject` without, and whose
/// disposition is the outcome that gives the exit status.
protocol CommandReporting: ParsableCommand {
    /// The JSON shape of the command's report (docs/json.md).
    associatedtype Report: Encodable & OutcomeReporting
    /// The root command, holding `--json` and `--quiet` given before the command name.
    var root: Pkgtool { get }
    /// `--json` and `--quiet` given after the command name.
    var outputOptions: OutputOptions { get }
    /// The file the command's diagnostics concern when they name none (the package, the source).
    var subject: String { get }
    /// What an interrupted run leaves as it was, said after "COMMAND: interrupted; ".
    var leftWhenInterrupted: String { get }
    /// How long the work may take to stop once asked (default `Interruption.defaultGrace`).
    var interruptionGrace: Double { get }
    /// The report of a run that `failure` stopped before it could make its own: refused or
    /// failed as the error's disposition says.
    func report(for failure: any DiagnosableError) -> Report
    /// Prints `report` as text (never with `--json`): results on stdout, diagnostics on stderr.
    func printText(_ report: Report, _ output: OutputOptions)
    /// The message when `error` is, for this command, a usage error (exit 64); nil otherwise.
    func usageProblem(in error: any Error) -> String?
}

extension CommandReporting {
    var interruptionGrace: Double { Interruption.defaultGrace }

    func usageProblem(in error: any Error) -> String? { nil }

    /// `--json` and `--quiet`, wherever they were given.
    var mergedOutputOptions: OutputOptions { outputOptions.merged(with: root.outputOptions) }

    /// Prints `report` and ends with its status: returns on success, else throws it.
    func finish(_ report: Report, _ output: OutputOptions) throws {
        if output.json {
            Console.json(report)
        } else {
            printText(report, output)
        }
        let status = ExitStatus(report.outcome)
        if status != .success { throw status.exitCode }
    }

    /// Says what `error` needs said and gives the error to end with: an exit status, or the
    /// error itself when it is the argument parser's to say.
    func failure(_ error: any Error, _ output: OutputOptions) -> any Error {
        if let problem = usageProblem(in: error) {
            Console.err(UsageError.text(problem, for: Self.self))
            return ExitStatus.usage.exitCode
        }
        if let usage = error as? UsageError {
            Console.err(UsageError.text(usage.message, for: Self.self))
            return ExitStatus.usage.exitCode
        }
        guard let failure = CommandFailure.diagnosable(error) else { return error }
        if output.json {
            Console.json(report(for: failure))
        } else {
            Console.print([failure.diagnostic], file: subject, quiet: output.quiet)
        }
        return ExitStatus(Outcome(failure.disposition)).exitCode
    }

    /// Runs the work under `Interruption` with this command's name, line and grace.
    func interruptible<T>(_ body: (Cancellation) throws -> T) throws -> T {
        try Interruption.run(Self.commandLineName, leaves: leftWhenInterrupted, grace: interruptionGrace, body)
    }

    /// `interruptible` for async work.
    func interruptible<T>(_ body: (Cancellation) async throws -> T) async throws -> T {
        try await Interruption.run(Self.commandLineName, leaves: leftWhenInterrupted, grace: interruptionGrace, body)
    }
}
