import ArgumentParser
import PkgKit

/// A command whose synchronous work makes one report, run the way `CommandReporting` describes.
/// It implements `execute`; `run` is given.
protocol ReportingCommand: CommandReporting {
    /// Does the work and returns its report; may print as it goes (never with `--json`).
    /// `cancellation` is set when the run is interrupted: pass it to PkgKit's long work.
    func execute(_ output: OutputOptions, _ cancellation: Cancellation) throws -> Report
}

extension ReportingCommand {
    func run() throws {
        Console.wording = HintWording.wording(for: Self.self)
        let output = mergedOutputOptions
        let report: Report
        do {
            report = try interruptible { try execute(output, $0) }
        } catch {
            throw failure(error, output)
        }
        try finish(report, output)
    }
}
