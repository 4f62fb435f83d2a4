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
            it is refused (version-not-bumped) and nothing changes. Files appear atomically; with --sign, \
            DIR/signatures/<sha256 of catalog.json>.sig (one line per key) is written before the catalog it \
            signs, and the newest 32 signature files are kept. The catalog is replaced last, after the \
            packages it names. Upload everything but catalog.json first, then catalog.json. \
            Exit 0 published or unchanged, 1 refused, 2 could not be done.
            """)

        @Argument(help: "Package files (.pkg) to publish.")
        var packages: [String] = []

        @Option(name: .customLong("to"), help: ArgumentHelp("The published folder (created if missing).", valueName: "DIR"))
        var destination: String

        @Option(name: .customLong("sign"), help: ArgumentHelp("Sign catalog.json with this Ed25519 private key (PEM, as `pkgtool keygen` or openssl writes it). Repeat to sign with several keys while one is rotated out.", valueName: "KEY.pem"))
        var signingKeys: [String] = []

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
            var keys: [CatalogSigningKey] = []
            for path in signingKeys {
                do {
                    keys.append(try CatalogSigningKey(pem: String(contentsOfFile: path, encoding: .utf8)))
                } catch let error as KeyError {
                    try finish(PublishReport.failed(destination: destination, packages: packages, error.at(path).diagnostic))
                } catch {
                    try finish(PublishReport.failed(destination: destination, packages: packages,
                                                    Diagnostic(.unreadableInput, path: path, "cannot be read")))
                }
            }
            let report: PublishReport
            do {
                report = try Publisher(destination: destination).publish(packages, options: PublishOptions(signingKeys: keys, keep: keep))
            } catch let error as PublishError {
                // Only a write failing midway is thrown: the folder could not be written.
                try finish(PublishReport.failed(destination: destination, packages: packages, error.diagnostic))
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
                    Console.print(package.diagnostics.map { Self.naming(package.path, in: $0) }, quiet: output.quiet)
                    if !output.quiet { Console.out(line(for: package)) }
                }
                if !output.quiet {
                    for removed in report.removed {
                        Console.out("removed \(removed.productIdentifier) \(removed.contentVersion) (--keep)")
                    }
                    Console.out(summary(report))
                }
            }
            throw ExitCode(Self.exitStatus(report.status))
        }

        /// SPEC section 4: 0 published or unchanged, 1 refused, 2 could not be done.
        static func exitStatus(_ status: PublishStatus) -> Int32 {
            switch status {
            case .published, .unchanged: return 0
            case .refused: return 1
            case .failed: return 2
            }
        }

        /// A package's diagnostic as its line names it: `FILE: message`, or `FILE ENTRY:
        /// message` for an entry inside the package, since several packages are in play.
        static func naming(_ package: String, in diagnostic: Diagnostic) -> Diagnostic {
            var named = diagnostic
            named.path = diagnostic.path.map { $0 == package ? package : package + " " + $0 } ?? package
            return named
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
