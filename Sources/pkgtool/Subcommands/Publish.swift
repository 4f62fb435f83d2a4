import ArgumentParser
import Foundation
import PkgKitDiagnostics
import PkgKit

extension Pkgtool {
    /// `pkgtool publish`: packages into a folder that any static web server can serve.
    struct Publish: ReportingCommand {
        static let configuration = CommandConfiguration(
            commandName: "publish",
            abstract: "Publish packages into a folder that any static web server, object store or CDN can serve.",
            discussion: """
            Validates every package first; if any is invalid, nothing in DIR changes (exit 1). Copies each \
            package to DIR/<IAPProductIdentifier>/<ContentVersion>.pkg and lists it in DIR/catalog.json, \
            keeping what is already published. Published files are immutable: the same version again with \
            the same bytes is a no-op; with different bytes, or a version lower than the product's latest, \
            it is refused (version-not-bumped) and nothing changes. Files appear atomically; with --sign, \
            DIR/signatures/<sha256 of catalog.json>.sig (one line per key) is written before the catalog it \
            signs, and the newest 32 signature files are kept. The catalog is replaced last, after the \
            packages it names. Upload everything but catalog.json first, then catalog.json. SIGINT and \
            SIGTERM stop publish before it replaces the catalog, with DIR as it was (exit 130 / 143). \
            Exit 0 published or unchanged, 1 refused, 2 could not be done.
            """)

        @Argument(help: "Package files (.pkg) to publish: one at least.")
        var packages: [String]

        @Option(name: [.customLong("to"), .customShort("o"), .customLong("output")], help: ArgumentHelp("The published folder (created if missing).", valueName: "DIR"))
        var destination: String

        @Option(name: .customLong("sign"), help: ArgumentHelp("Sign catalog.json with this Ed25519 private key (PEM, as `pkgtool keygen` or openssl writes it). Repeat to sign with several keys while one is rotated out.", valueName: "KEY.pem"))
        var signingKeys: [String] = []

        @OptionGroup var keep: KeepOptions
        @OptionGroup var outputOptions: OutputOptions
        @ParentCommand var root: Pkgtool

        var subject: String { destination }
        var leftWhenInterrupted: String { "nothing was published; \(destination) is as it was" }

        /// A key or a folder that fails the publish before it ends is still a report: every
        /// package listed, none published.
        func execute(_ output: OutputOptions, _ cancellation: Cancellation) throws -> PublishReport {
            do {
                let keys = try signingKeys.map(Self.signingKey)
                let options = PublishOptions(signingKeys: keys, keep: keep.count, cancellation: cancellation)
                return try Publisher(destination: destination).publish(packages, options: options)
            } catch let error as any DiagnosableError {
                return report(for: error)
            }
        }

        /// The private key in the PEM file at `path`.
        private static func signingKey(at path: String) throws -> CatalogSigningKey {
            let pem: String
            do {
                pem = try String(contentsOfFile: path, encoding: .utf8)
            } catch {
                throw CommandFailure(.unreadableInput, path: path, "cannot be read")
            }
            do {
                return try CatalogSigningKey(pem: pem)
            } catch {
                throw error.at(path)
            }
        }

        func report(for failure: any DiagnosableError) -> PublishReport {
            PublishReport.stopped(destination: destination, packages: packages, by: failure)
        }

        func printText(_ report: PublishReport, _ output: OutputOptions) {
            Console.print(report.diagnostics, file: destination, quiet: output.quiet)
            for package in report.packages {
                Console.print(PackageAdvice.worded(package.diagnostics, package: package.path), file: package.path, several: true,
                              quiet: output.quiet)
                if !output.quiet, let warning = Self.wholeDownloadWarning(package) { Console.err(warning) }
                if !output.quiet { Console.out(line(for: package)) }
            }
            guard !output.quiet else { return }
            for removed in report.removed {
                Console.out("removed \(removed.productIdentifier) \(removed.contentVersion) (--keep)")
            }
            Console.out(summary(report))
        }

        /// A published zip, tar or installer package has no table of contents a device can read
        /// alone: every update downloads it whole. Said, with how to make a .pkg that is read in part.
        static func wholeDownloadWarning(_ package: PublishedPackage) -> String? {
            guard package.status == .published || package.status == .unchanged, let format = package.format,
                  format == .zip || format == .tar || format == .flatPackage else { return nil }
            let what = format == .flatPackage ? "an installer package" : "a \(format.rawValue) archive"
            return "warning: \(package.path) is \(what), not a xar: devices will always download it whole, never only "
                + "the files that changed; make a .pkg from it with \(PackageAdvice.createCommand(package.path)) and publish that"
        }

        private func line(for package: PublishedPackage) -> String {
            let name = "\(package.productIdentifier ?? "?") \(package.contentVersion ?? "?")"
            switch package.status {
            case .published:
                return "published \(name) -> \(package.publishedPath ?? "?") (\(ByteSize.counted(package.size ?? 0)), sha256 \(package.sha256 ?? "?"))"
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
