import ArgumentParser
import PkgKit

/// A command whose async work (downloads) makes one report, run the way
/// `CommandReporting` describes: the same printing, exit statuses and interruption as
/// `ReportingCommand`. It implements `execute`; `run` is given.
///
/// Porting a command: conform to this protocol, declare `root`, `outputOptions`, `subject` and
/// `leftWhenInterrupted`; move the work into `execute` (returning the report instead of printing
/// it and throwing an exit code), the text form into `printText`, and the report's exit status
/// into an extension in `ExitStatus.swift`.
protocol AsyncReportingCommand: AsyncParsableCommand, CommandReporting {
    /// Does the work and returns its report; may print as it goes (never with `--json`).
    /// `cancellation` is set when the run is interrupted: pass it to PkgKit's long work.
    func execute(_ output: OutputOptions, _ cancellation: Cancellation) async throws -> Report
}

extension AsyncReportingCommand {
    func run() async throws {
        Console.wording = HintWording.wording(for: Self.self)
        let output = mergedOutputOptions
        let report: Report
        do {
            report = try await interruptible { try await execute(output, $0) }
        } catch {
            throw failure(error, output)
        }
        try finish(report, output)
    }
}
