import ArgumentParser
import PkgKit

extension Pkgtool {
    /// `pkgtool validate`: every rule on packages or unpacked folders.
    struct Validate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check packages or unpacked folders against every rule.",
            discussion: "Reads every file in full (checksums, executable detection, sizes). Prints `error[code] path: message` per finding and a summary line per package.")

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

        @OptionGroup var limit: LimitOptions
        @OptionGroup var outputOptions: OutputOptions

        func validate() throws {
            if previous != nil && previousVersion != nil { throw ValidationError("give --previous or --previous-version, not both") }
            if let previousVersion, ContentVersion(previousVersion) == nil {
                throw ValidationError("--previous-version: \(ContentVersion.problem(with: previousVersion) ?? previousVersion)")
            }
        }

        func run() throws {
            var context = RuleContext(purpose: .validate, limits: limit.limits, expectedProductIdentifier: productIdentifier)
            if let previousVersion, let version = ContentVersion(previousVersion) {
                context.previous = PreviousPackage(productIdentifier: nil, contentVersion: version)
            }
            if let previous {
                do {
                    let old = try PackageCheck.run(previous, context: RuleContext(purpose: .validate, limits: limit.limits))
                    guard let asPrevious = old.asPrevious else {
                        throw Console.fail("\(previous): the previous package has no readable ContentInfo.plist")
                    }
                    context.previous = asPrevious
                } catch let error as ReadError {
                    throw Console.fail(describe(error))
                }
            }
            let bar = ProgressBar(enabled: !outputOptions.json && !outputOptions.quiet)
            var reports: [PackageReport] = []
            var ioFailure = false
            for path in paths {
                do {
                    // Contents are compared only against a previous package; otherwise the container's
                    // own checksums are verified by reading, and hashing again would be wasted.
                    let check = try PackageCheck.run(path, context: context, digests: context.previous?.payloadDigests != nil) { bar.update($0, of: $1) }
                    bar.finish()
                    let report = PackageReport(check, strict: strict)
                    reports.append(report)
                    if !outputOptions.json {
                        Console.print(report.diagnostics, quiet: outputOptions.quiet)
                        if !outputOptions.quiet { Console.out(summary(report)) }
                    }
                } catch let error as ReadError {
                    bar.finish()
                    ioFailure = true
                    Console.err("error: \(describe(error))")
                }
            }
            let whole = ValidationReport(packages: reports)
            if outputOptions.json { Console.json(whole) }
            if ioFailure { throw ExitCode(2) }
            if !whole.valid { throw ExitCode.failure }
        }

        private func summary(_ report: PackageReport) -> String {
            let errors = report.diagnostics.filter { $0.severity == .error }.count
            let warnings = report.diagnostics.count - errors
            let verdict = report.valid ? "valid" : "INVALID"
            return "\(report.path): \(verdict) — \(report.productIdentifier ?? "?") \(report.contentVersion ?? "?"), \(report.format?.rawValue ?? "?"), \(report.fileCount) files, \(report.payloadBytes) bytes; \(errors) errors, \(warnings) warnings"
        }
    }
}

/// A read failure in words, with its path.
func describe(_ error: ReadError) -> String {
    switch error {
    case .io(let path, let message): return "\(path): \(message)"
    case .unreadable(let path, let message), .checksumMismatch(let path, let message), .duplicateEntry(let path, let message): return "\(path ?? "package"): \(message)"
    }
}
