import ArgumentParser
import Foundation
import PkgKit

extension Pkgtool {
    /// `pkgtool publish`: packages into a folder that any static web server can serve.
    struct Publish: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Publish packages into a folder that any static web server, object store or CDN can serve.",
            discussion: """
            Validates every package first; if any is invalid, nothing in DIR changes (exit 1). Copies each \
            package to DIR/<IAPProductIdentifier>/<ContentVersion>.pkg and lists it in DIR/catalog.json, \
            keeping what is already published. Published files are immutable: the same version again with \
            the same bytes is a no-op; with different bytes, or a version lower than the product's latest, \
            it is refused (version-not-bumped) and nothing changes. Files appear atomically; the catalog is \
            replaced after the packages it names, its signature (--sign) right after it.
            """)

        @Argument(help: "Package files (.pkg) to publish.")
        var packages: [String] = []

        @Option(name: .customLong("to"), help: ArgumentHelp("The published folder (created if missing).", valueName: "DIR"))
        var destination: String

        @Option(name: .customLong("sign"), help: ArgumentHelp("Sign catalog.json with this Ed25519 private key (PEM, as `pkgtool keygen` or openssl writes it).", valueName: "KEY.pem"))
        var signingKey: String?

        @Option(help: ArgumentHelp("Afterwards keep only the newest N versions of each product (N ≥ 1). Default: keep all.", valueName: "N"))
        var keep: Int?

        @OptionGroup var outputOptions: OutputOptions
        @ParentCommand var root: Pkgtool

        /// `--json` and `--quiet`, given before or after the command name.
        var output: OutputOptions { outputOptions.merged(with: root.outputOptions) }

        func validate() throws {
            if packages.isEmpty { throw ValidationError("give at least one package to publish") }
            if let keep, keep < 1 { throw ValidationError("--keep must be at least 1") }
        }

        func run() throws {
            var key: CatalogSigningKey?
            if let signingKey {
                do {
                    key = try CatalogSigningKey(pem: String(contentsOfFile: signingKey, encoding: .utf8))
                } catch {
                    let reason = (error as? KeyError)?.reason ?? "cannot be read"
                    try finish(PublishReport.failed(destination: destination, packages: packages,
                                                    Diagnostic(.unreadableInput, path: signingKey, "\(signingKey): \(reason)")))
                }
            }
            let report: PublishReport
            do {
                report = try Publisher(destination: destination).publish(packages, options: PublishOptions(signingKey: key, keep: keep))
            } catch let error as PublishError {
                // Only a write failing midway is thrown: the folder could not be written.
                try finish(PublishReport.failed(destination: destination, packages: packages,
                                                Diagnostic(.ioError, path: error.path, error.reason)))
            }
            try finish(report)
        }

        /// Prints the report and exits with its status.
        private func finish(_ report: PublishReport) throws -> Never {
            if output.json {
                Console.json(report)
            } else {
                Console.print(report.diagnostics, quiet: output.quiet)
                for package in report.packages {
                    Console.print(package.diagnostics, quiet: output.quiet)
                    if !output.quiet { Console.out(line(for: package)) }
                }
                if !output.quiet {
                    for removed in report.removed {
                        Console.out("removed \(removed.productIdentifier) \(removed.contentVersion) (--keep)")
                    }
                    Console.out(summary(report))
                }
            }
            throw ExitCode(report.exitCode)
        }

        private func line(for package: PublishedPackage) -> String {
            let name = "\(package.productIdentifier ?? "?") \(package.contentVersion ?? "?")"
            switch package.status {
            case .published:
                return "published \(name) -> \(package.publishedPath ?? "?") (\(package.size ?? 0) bytes, sha256 \(package.sha256 ?? "?"))"
            case .unchanged: return "unchanged \(name): already published with the same bytes"
            case .refused: return "refused \(package.path)"
            case .skipped: return "skipped \(package.path): valid, but nothing was published"
            case .failed: return "failed \(package.path): cannot be read"
            }
        }

        private func summary(_ report: PublishReport) -> String {
            switch report.status {
            case .published, .unchanged:
                let verb = report.status == .published ? "wrote" : "unchanged:"
                return "\(verb) \(report.catalog)" + (report.signature.map { " and \($0)" } ?? " (unsigned)")
            case .refused: return "refused: nothing in \(report.destination) changed"
            case .failed: return "failed: see the errors above"
            }
        }
    }
}
