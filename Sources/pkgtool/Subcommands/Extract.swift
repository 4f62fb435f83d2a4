import ArgumentParser
import PkgKitDiagnostics
import PkgKit

extension Pkgtool {
    /// `pkgtool extract`: validate, then install into `DIR/<id>/<version>/` atomically.
    struct Extract: ReportingCommand {
        static let configuration = CommandConfiguration(
            commandName: "extract",
            abstract: "Install a package into a Documents folder.",
            discussion: """
            Validates the package first; an invalid package installs nothing. Installs the files under \
            Contents/ into DIR/<IAPProductIdentifier>/<ContentVersion>/ and records the current version in \
            DIR/<IAPProductIdentifier>/ContentInfo.plist. Staged, flushed and renamed into place: an \
            interrupted run leaves the previous version current. Status: installed, unchanged (same version, \
            same files), refused (invalid, same version with different files, or a downgrade) or \
            failed (input unreadable, I/O error: exit 2).
            """)

        @ParentCommand var root: Pkgtool

        @Argument(help: "The package (.pkg: xar, zip, tar, flat installer package) or an unpacked folder.")
        var package: String

        @Option(name: .customLong("documents"), help: ArgumentHelp("The Documents folder to install into.", valueName: "DIR"))
        var documents: String

        @Option(name: .customLong("product-id"), help: ArgumentHelp("The IAPProductIdentifier the package must have.", valueName: "ID"))
        var productIdentifier: String?

        @OptionGroup var keep: KeepOptions

        @Flag(name: .customLong("allow-downgrade"), help: "Install a version lower than the installed one.")
        var allowDowngrade = false

        @Flag(help: "Replace an installed folder of the same version whose files differ.")
        var force = false

        @OptionGroup var limit: LimitOptions
        @OptionGroup var outputOptions: OutputOptions

        var subject: String { package }
        var leftWhenInterrupted: String { "nothing was installed; the previous version stays current" }

        func execute(_ output: OutputOptions, _ cancellation: Cancellation) throws -> ExtractReport {
            let bar = ProgressBar(enabled: !output.json && !output.quiet)
            defer { bar.finish() }
            let options = InstallOptions(expectedProductIdentifier: productIdentifier, limits: limit.limits, keep: keep.count,
                                         allowDowngrade: allowDowngrade, force: force,
                                         progress: { bar.update($0, of: $1) }, cancellation: cancellation)
            return .done(try Installer(documents: documents).install(package, options: options))
        }

        func printText(_ report: ExtractReport, _ output: OutputOptions) {
            guard case .done(let report) = report else { return }
            Console.print(report.diagnostics, file: package, quiet: output.quiet)
            if !output.quiet { Console.out(summary(report)) }
        }

        func report(for failure: any DiagnosableError) -> ExtractReport {
            .stopped(StoppedInstall(failure))
        }

        private func summary(_ report: InstallReport) -> String {
            let id = report.productIdentifier ?? "?", version = report.contentVersion ?? "?"
            var line: String
            switch report.status {
            case .installed:
                line = "installed \(id) \(version) -> \(report.installedPath ?? "?") (\(Console.count(report.fileCount, "file")), \(ByteSize.counted(report.payloadBytes)))"
                if let previous = report.previousVersion { line += ", was \(previous)" }
            case .unchanged:
                line = "unchanged \(id) \(version) already installed at \(report.installedPath ?? "?")"
            case .refused:
                line = "refused \(package): nothing installed"
            }
            if !report.removedVersions.isEmpty { line += "; removed \(report.removedVersions.joined(separator: ", "))" }
            return line
        }
    }
}
