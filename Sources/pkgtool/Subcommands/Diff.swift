import ArgumentParser
import PkgKit

extension Pkgtool {
    /// `pkgtool diff`: what an update changes, and whether it is a proper update.
    struct Diff: ReportingCommand {
        static let configuration = CommandConfiguration(
            abstract: "Compare two versions of a package by content.",
            discussion: """
            Reads both packages in full, checksums verified, and lists files added, removed and \
            changed (by sha1 of their bytes) with a verdict: ok, version-not-bumped, \
            content-unchanged or product-identifier-mismatch; invalid when either package is damaged \
            or breaks a rule (its errors are printed). Exit 0 for ok, 1 otherwise, 2 when a path is \
            missing or unreadable.
            """)

        @ParentCommand var root: Pkgtool
        @Argument(help: "The older package or folder.") var old: String
        @Argument(help: "The newer package or folder.") var new: String
        @OptionGroup var limit: LimitOptions
        @OptionGroup var outputOptions: OutputOptions

        func execute(_ output: OutputOptions) throws {
            let context = RuleContext(purpose: .validate, limits: limit.limits)
            var status: Int32 = 0
            // Each side is read whole; one that cannot be read at all is the verdict's reason.
            func check(_ path: String) -> Result<PackageCheck, CommandFailure> {
                do {
                    return .success(try PackageCheck.run(path, context: context))
                } catch let error as ReadError {
                    let failure = CommandFailure(error)
                    status = max(status, failure.status)
                    return .failure(failure)
                } catch {
                    return .failure(CommandFailure(.unreadableInput, "\(path): \(error)"))
                }
            }
            let report: DiffReport
            switch (check(old), check(new)) {
            case (.success(let a), .success(let b)):
                report = DiffReport(old: a, new: b)
            case (let a, let b):
                report = DiffReport(invalid: side(a, old), side(b, new))
            }
            if output.json {
                Console.json(report)
            } else {
                for side in [report.old, report.new] where !side.diagnostics.isEmpty {
                    Console.print(side.diagnostics, quiet: output.quiet)
                    if !output.quiet { Console.err("\(side.path): invalid (\(Console.count(side.diagnostics.count, "error"))): not compared") }
                }
                if !output.quiet {
                    Console.out("\(report.old.productIdentifier ?? "?") \(report.old.contentVersion ?? "?") -> \(report.new.productIdentifier ?? "?") \(report.new.contentVersion ?? "?")")
                    for path in report.added { Console.out("+ \(path)") }
                    for path in report.removed { Console.out("- \(path)") }
                    for path in report.changed { Console.out("~ \(path)") }
                    Console.out("verdict: \(report.verdict.rawValue)")
                }
            }
            if report.verdict != .ok { throw ExitCode(max(status, 1)) }
        }

        private func side(_ result: Result<PackageCheck, CommandFailure>, _ path: String) -> DiffReport.Side {
            switch result {
            case .success(let check): return DiffReport.Side(check)
            case .failure(let failure): return DiffReport.Side(unreadable: path, failure.diagnostic)
            }
        }

        func report(for failure: Diagnostic) -> DiffReport {
            DiffReport(invalid: DiffReport.Side(unreadable: old, failure), DiffReport.Side(unreadable: new, failure))
        }
    }
}
