import ArgumentParser
import PkgKit

extension Pkgtool {
    /// `pkgtool extract`: validate, then install into `DIR/<id>/<version>/` atomically.
    struct Extract: ReportingCommand {
        static let configuration = CommandConfiguration(
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

        @Option(help: ArgumentHelp("Afterwards keep the current version plus the newest N − 1 others (N ≥ 1). Default: keep all.", valueName: "N"))
        var keep: Int?

        @Flag(name: .customLong("allow-downgrade"), help: "Install a version lower than the installed one.")
        var allowDowngrade = false

        @Flag(help: "Replace an installed folder of the same version whose files differ.")
        var force = false

        @OptionGroup var limit: LimitOptions
        @OptionGroup var outputOptions: OutputOptions

        func validate() throws {
            if let keep, keep < 1 { throw ValidationError("--keep must be at least 1") }
        }

        func execute(_ output: OutputOptions) throws {
            let installer = Installer(documents: documents)
            let bar = ProgressBar(enabled: !output.json && !output.quiet)
            Interruption.install()
            let options = InstallOptions(expectedProductIdentifier: productIdentifier, limits: limit.limits, keep: keep,
                                         allowDowngrade: allowDowngrade, force: force,
                                         progress: { bar.update($0, of: $1) }, cancellation: Interruption.cancellation)
            let report: InstallReport
            do {
                defer { bar.finish() }
                report = try installer.install(package, options: options)
            } catch is OperationCancelled {
                Console.err("extract: interrupted; nothing was installed")
                throw Interruption.exitCode
            }
            if output.json {
                Console.json(report)
            } else {
                Console.print(report.diagnostics, quiet: output.quiet)
                if !output.quiet { Console.out(summary(report)) }
            }
            if report.status == .refused { throw ExitCode.failure }
        }

        func report(for failure: Diagnostic) -> FailedInstall {
            FailedInstall(diagnostics: [failure])
        }

        private func summary(_ report: InstallReport) -> String {
            let id = report.productIdentifier ?? "?", version = report.contentVersion ?? "?"
            var line: String
            switch report.status {
            case .installed:
                line = "installed \(id) \(version) -> \(report.installedPath ?? "?") (\(Console.count(report.fileCount, "file")), \(report.payloadBytes) bytes)"
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

/// `extract --json` when the install could not be done at all (exit 2): the report's shape
/// (SPEC section 5) with status `failed`, as `sync` reports a product it could not install.
struct FailedInstall: Encodable {
    var diagnostics: [Diagnostic]

    enum CodingKeys: String, CodingKey {
        case status, productIdentifier, contentVersion, previousVersion, installedPath, fileCount, payloadBytes,
             removedVersions, diagnostics
    }

    func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode("failed", forKey: .status)
        for key in [CodingKeys.productIdentifier, .contentVersion, .previousVersion, .installedPath] { try c.encodeNil(forKey: key) }
        try c.encode(0, forKey: .fileCount)
        try c.encode(0, forKey: .payloadBytes)
        try c.encode([String](), forKey: .removedVersions)
        try c.encode(diagnostics, forKey: .diagnostics)
    }
}
