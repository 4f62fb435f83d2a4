import ArgumentParser
import PkgKitDiagnostics
import PkgKitIdentity
import PkgKit

extension Pkgtool {
    /// `pkgtool validate`: every rule on packages or unpacked folders.
    struct Validate: ReadOnlyCommand {
        static let configuration = CommandConfiguration(
            commandName: "validate",
            abstract: "Check packages or unpacked folders against every rule.",
            discussion: """
            Reads every file in full (checksums, executable detection, sizes). Prints \
            `error[code] path: message` per finding and a summary line per package. Every path is \
            listed in the JSON report, a missing one too (unreadable-input, exit 2). For CI, \
            --reporter github prints a GitHub Actions annotation per finding (::error or ::warning, \
            file= the package, the entry in the message) then the summary lines, and --reporter \
            junit one JUnit XML document (a testsuite per package, a testcase per rule, a failure \
            per error, warnings as system-out); the exit status is the same with every reporter.
            """)

        @ParentCommand var root: Pkgtool

        @Argument(help: "Packages (.pkg: xar, zip, tar, flat installer package) or unpacked folders.")
        var paths: [String]

        @Option(name: .customLong("product-id"), help: ArgumentHelp("The IAPProductIdentifier every package must have.", valueName: "ID"))
        var productIdentifier: String?

        @Option(help: ArgumentHelp("The package (or folder) these update: same product id, greater version.", valueName: "OLD"))
        var previous: String?

        @Option(name: .customLong("previous-version"), help: ArgumentHelp("The version these update: theirs must be greater.", valueName: "V"))
        var previousVersion: String?

        @Flag(help: "Treat warnings as errors.")
        var strict = false

        @Option(help: "How findings are printed: for people, as GitHub Actions workflow commands, or as one JUnit XML document, on stdout; not with --json.")
        var reporter: ValidateReporter = .text

        @OptionGroup var limit: LimitOptions
        @OptionGroup var outputOptions: OutputOptions

        func validate() throws {
            if previous != nil && previousVersion != nil { throw ValidationError("give --previous or --previous-version, not both") }
            if let previousVersion, ContentVersion(previousVersion) == nil {
                throw ValidationError("--previous-version: \(ContentVersion.problem(with: previousVersion) ?? previousVersion)")
            }
        }

        var subject: String { previous ?? paths.first ?? "" }

        func execute(_ output: OutputOptions, _ cancellation: Cancellation) throws -> ValidationReport {
            if reporter != .text && output.json {
                throw UsageError(message: "--reporter \(reporter.rawValue) prints its own format on stdout; give it or --json, not both")
            }
            do {
                return try check(output, cancellation)
            } catch {
                // A CI reporter reports a run that failed first too: its document stays whole.
                guard reporter != .text, let failure = CommandFailure.diagnosable(error) else { throw error }
                return report(for: failure)
            }
        }

        private func check(_ output: OutputOptions, _ cancellation: Cancellation) throws -> ValidationReport {
            let request = ValidationRequest(paths: paths, productIdentifier: productIdentifier, previous: previous,
                                            previousVersion: previousVersion.flatMap(ContentVersion.init), strict: strict,
                                            limits: limit.limits, cancellation: cancellation)
            let bar = ProgressBar(enabled: !output.json && !output.quiet && reporter == .text)
            return try ValidationReport.make(request, progress: { bar.update($0, of: $1) }) { report in
                bar.finish()
                report = PackageAdvice.worded(report)
                // Said as each package is done: a long run shows its findings as it goes.
                if !output.json && reporter == .text {
                    Console.print(report.diagnostics, file: report.path, several: paths.count > 1, quiet: output.quiet)
                    if !output.quiet { Console.out(PackageSummary.line(report, strict: strict)) }
                }
            }
        }

        func printText(_ report: ValidationReport, _ output: OutputOptions) {
            reporter.print(report, strict: strict, quiet: output.quiet)
        }

        func report(for failure: any DiagnosableError) -> ValidationReport {
            ValidationReport(packages: paths.map { PackageReport(unchecked: $0, diagnostics: []) }, diagnostics: [failure.diagnostic])
        }
    }
}
