import ArgumentParser
import PkgKit

extension Pkgtool {
    /// `pkgtool diff`: what an update changes, and whether it is a proper update.
    struct Diff: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Compare two versions of a package by content.",
            discussion: "Lists files added, removed and changed (by sha1 of their bytes) and gives a verdict: ok, version-not-bumped, content-unchanged or product-identifier-mismatch. Exit 0 for ok, 1 otherwise.")

        @Argument(help: "The older package or folder.") var old: String
        @Argument(help: "The newer package or folder.") var new: String
        @OptionGroup var limit: LimitOptions
        @OptionGroup var outputOptions: OutputOptions

        func run() throws {
            let context = RuleContext(purpose: .validate, limits: limit.limits)
            let report: DiffReport
            do {
                report = DiffReport(old: try PackageCheck.run(old, context: context), new: try PackageCheck.run(new, context: context))
            } catch let error as ReadError {
                throw Console.fail(describe(error))
            }
            if outputOptions.json {
                Console.json(report)
            } else if !outputOptions.quiet {
                Console.out("\(report.old.productIdentifier ?? "?") \(report.old.contentVersion ?? "?") -> \(report.new.productIdentifier ?? "?") \(report.new.contentVersion ?? "?")")
                for path in report.added { Console.out("+ \(path)") }
                for path in report.removed { Console.out("- \(path)") }
                for path in report.changed { Console.out("~ \(path)") }
                Console.out("verdict: \(report.verdict.rawValue)")
            }
            if report.verdict != .ok { throw ExitCode.failure }
        }
    }
}
