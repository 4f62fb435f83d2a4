import ArgumentParser
import PkgKit

/// A command whose outcome is one report: text, or with `--json` one JSON document on stdout,
/// whichever way the command ends. A failure that stops the work (missing input, I/O error) is
/// turned into that command's report with the failure as its diagnostic, in one place here.
protocol ReportingCommand: ParsableCommand {
    /// The JSON shape of the command's report (SPEC section 5).
    associatedtype Report: Encodable
    /// The root command, holding `--json` and `--quiet` given before the command name.
    var root: Pkgtool { get }
    /// `--json` and `--quiet` given after the command name.
    var outputOptions: OutputOptions { get }
    /// Does the work and prints its report; throws a failure or an exit status.
    func execute(_ output: OutputOptions) throws
    /// The report of a run that failed before it could make its own.
    func report(for failure: Diagnostic) -> Report
}

extension ReportingCommand {
    /// `--json` and `--quiet`, wherever they were given.
    var mergedOutputOptions: OutputOptions { outputOptions.merged(with: root.outputOptions) }

    func run() throws {
        let output = mergedOutputOptions
        do {
            try execute(output)
        } catch let failure as CreateFailure where failure.kind == .usage {
            // A usage error found while working: said as the parser says one, with this
            // command's usage, exit 64.
            Console.err("Error: \(failure.message)\nUsage: \(Pkgtool.usageString(for: Self.self))\n  See 'pkgtool help \(Self._commandName)' for more information.")
            throw ExitCode.validationFailure
        } catch {
            guard let failure = CommandFailure(error) else { throw error }
            if output.json {
                Console.json(report(for: failure.diagnostic))
            } else {
                Console.print([failure.diagnostic], quiet: output.quiet)
            }
            throw ExitCode(failure.status)
        }
    }
}
