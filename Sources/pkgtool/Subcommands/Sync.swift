import ArgumentParser
import Foundation
import PkgKit

extension Pkgtool {
    /// `pkgtool sync`: a Documents folder brought up to date from a published catalog.
    struct Sync: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Bring a Documents folder up to date from a published catalog, downloading only what changed.",
            discussion: """
            SOURCE is the catalog's URL (http://, https://) or a published folder or catalog.json path. Each \
            --product, or without any every product already installed in DIR, is brought to the catalog's \
            latest version and installed exactly as extract installs (layout, record, lock, atomicity, --keep); \
            sync never downgrades. Everything is verified before it is used: the catalog's signature with \
            --trust, each package against its catalog entry, and every rule. Downloads resume from \
            DIR/<id>/.download-<version>.part; with a version installed and a server that answers Range \
            requests, only the files that changed are fetched (--no-delta: whole packages). \
            Exit 0 installed or unchanged, 1 refused, 2 could not be done.
            """)

        @Argument(help: "The catalog: its URL, or a published folder or catalog.json path.")
        var source: String

        @Option(name: .customLong("documents"), help: ArgumentHelp("The Documents folder to install into.", valueName: "DIR"))
        var documents: String

        @Option(name: .customLong("product"), help: ArgumentHelp("A product to install or update (repeatable). Default: every installed product.", valueName: "ID"))
        var products: [String] = []

        @Option(help: ArgumentHelp("Refuse a catalog whose signature does not verify with this Ed25519 public key (PEM). Repeatable: any of the keys will do.", valueName: "KEY.pub.pem"))
        var trust: [String] = []

        @Option(help: ArgumentHelp("Afterwards keep the current version plus the newest N − 1 others (N ≥ 1). Default: keep all.", valueName: "N"))
        var keep: Int?

        @Flag(name: .customLong("no-delta"), help: "Always download whole packages.")
        var noDelta = false

        @Option(help: ArgumentHelp("Fail a transfer that receives nothing for this many seconds (it is retried a few times).", valueName: "SECONDS"))
        var timeout: Double = 30

        @OptionGroup var limit: LimitOptions
        @OptionGroup var outputOptions: OutputOptions
        @ParentCommand var root: Pkgtool

        /// `--json` and `--quiet`, given before or after the command name.
        var output: OutputOptions { outputOptions.merged(with: root.outputOptions) }

        @Flag(help: "Report what a sync would do, writing nothing and downloading no package (exit 3 when updates are available).")
        var check = false

        func validate() throws {
            if let keep, keep < 1 { throw ValidationError("--keep must be at least 1") }
            guard timeout > 0, timeout <= 86_400 else { throw ValidationError("--timeout must be a number of seconds above 0 and at most 86400") }
        }

        func run() async throws {
            let catalogURL: URL
            do {
                catalogURL = try CatalogLocation.url(for: source)
            } catch {
                throw ValidationError(error.description)
            }
            var trustedKeys: [CatalogVerifyingKey] = []
            for trust in trust {
                do {
                    trustedKeys.append(try CatalogVerifyingKey(pem: String(contentsOfFile: trust, encoding: .utf8)))
                } catch let error as KeyError {
                    try finish(refusal(Diagnostic(.badSignature, path: trust, "not a usable public key (\(error.reason)): nothing was downloaded")))
                } catch {
                    try finish(refusal(Diagnostic(.unreadableInput, path: trust, "cannot read the trusted key")))
                }
            }
            Interruption.install()
            let options = SyncClient.Options(products: products, trustedKeys: trustedKeys, keep: keep, limits: limit.limits,
                                             delta: !noDelta,
                                             transferPolicy: TransferPolicy(idleTimeout: .milliseconds(Int64(timeout * 1000))),
                                             cancellation: Interruption.cancellation)
            let client = SyncClient(catalogURL: catalogURL, documents: documents)
            do {
                if check {
                    try finish(try await client.check(options))
                }
                let bar = ProgressBar(enabled: !output.json && !output.quiet)
                defer { bar.finish() }
                let report = try await client.sync(options) { step in
                    if step.phase == .downloading { bar.update(step.done, of: step.total, label: step.productIdentifier) }
                }
                bar.finish()
                try finish(report)
            } catch is OperationCancelled {
                Console.err("sync: interrupted; the previous versions stay current (a download in progress resumes next time)")
                throw Interruption.exitCode
            }
        }

        /// A report for a refusal before anything was fetched: every requested product refused.
        private func refusal(_ diagnostic: Diagnostic) -> SyncReport {
            let status: SyncStatus = diagnostic.code == .unreadableInput ? .failed : .refused
            return SyncReport(products: products.map { ProductSyncResult(productIdentifier: $0, status: status, diagnostics: [diagnostic]) },
                              diagnostics: [diagnostic])
        }

        /// Prints a sync's report and exits with its status.
        private func finish(_ report: SyncReport) throws -> Never {
            try finish(report, diagnostics: report.diagnostics + report.products.flatMap(\.diagnostics), signature: report.signature,
                       lines: report.products.map(line(for:)), nothing: "nothing to sync", outcome: report.outcome)
        }

        /// Prints a check's report and exits with its status.
        private func finish(_ report: SyncCheckReport) throws -> Never {
            try finish(report, diagnostics: report.diagnostics + report.products.flatMap(\.diagnostics), signature: report.signature,
                       lines: report.products.map(line(for:)), nothing: "nothing to check", outcome: report.outcome)
        }

        /// `report` as JSON, or its diagnostics and one line per product; then its exit status.
        private func finish(_ report: some Encodable, diagnostics: [Diagnostic], signature: CatalogSignatureStatus?, lines: [String],
                            nothing: String, outcome: SyncOutcome) throws -> Never {
            if output.json {
                Console.json(report)
            } else {
                printDiagnostics(diagnostics, signature: signature)
                if !output.quiet {
                    lines.forEach(Console.out)
                    if lines.isEmpty && diagnostics.isEmpty {
                        Console.out("\(nothing): no product is installed in \(documents) (name one with --product)")
                    }
                }
            }
            throw Self.exitCode(outcome)
        }

        /// Each diagnostic once, and a word when a signed catalog was taken without checking it.
        private func printDiagnostics(_ diagnostics: [Diagnostic], signature: CatalogSignatureStatus?) {
            var shown = Set<Diagnostic>()
            for diagnostic in diagnostics where shown.insert(diagnostic).inserted {
                Console.print([diagnostic], quiet: output.quiet)
            }
            if signature == .unchecked && !output.quiet {
                Console.err("note: the catalog is signed, but its signature was not checked: pass --trust KEY.pub.pem (the publisher's public key) to check it")
            }
        }

        /// SPEC section 7: 0 success, 3 updates available (`--check`), 1 refused, 2 failed.
        static func exitCode(_ outcome: SyncOutcome) -> ExitCode {
            switch outcome {
            case .success: return .success
            case .updatesAvailable: return ExitCode(3)
            case .refused: return ExitCode(1)
            case .failed: return ExitCode(2)
            }
        }

        /// `installed com.x 1.1 (was 1.0, delta: 3 files, 41 kB downloaded)`.
        private func line(for product: ProductSyncResult) -> String {
            let id = product.productIdentifier, version = product.contentVersion ?? "?"
            switch product.status {
            case .installed:
                var details: [String] = []
                if let previous = product.previousVersion { details.append("was \(previous)") }
                let bytes = "\(Self.bytes(product.bytesDownloaded)) downloaded"
                if product.delta, let files = product.filesDownloaded {
                    details.append("delta: \(files) \(files == 1 ? "file" : "files"), \(bytes)")
                } else {
                    details.append(bytes)
                    if let resumed = product.resumedFrom { details.append("resumed at \(Self.bytes(resumed))") }
                    if let reason = product.fullDownloadReason, reason != .resuming { details.append("full download: \(reason.rawValue)") }
                }
                return "installed \(id) \(version) (\(details.joined(separator: ", ")))"
            case .unchanged, .update:
                let current = product.previousVersion ?? version
                if !product.listed { return "unchanged \(id) \(current) (this catalog does not list it)" }
                return "unchanged \(id) \(current)"
            case .refused:
                return "refused \(id)\(product.contentVersion.map { " " + $0 } ?? ""): nothing installed"
            case .failed:
                return "failed \(id)\(product.contentVersion.map { " " + $0 } ?? ""): nothing installed; run sync again"
            }
        }

        /// `update com.x 1.0 -> 1.1 (delta, 1.7 MB to download)`.
        private func line(for product: ProductCheck) -> String {
            let id = product.productIdentifier, version = product.contentVersion ?? "?"
            switch product.status {
            case .update:
                let from = product.previousVersion.map { "\($0) -> " } ?? ""
                var how = product.delta ? "delta" : "full"
                if let reason = product.fullDownloadReason { how += ": \(reason.rawValue)" }
                return "update \(id) \(from)\(version) (\(how), \(Self.bytes(product.bytesToDownload)) to download)"
            case .unchanged, .installed:
                return "unchanged \(id) \(product.previousVersion ?? version)"
            case .refused:
                return "refused \(id)\(product.contentVersion.map { " " + $0 } ?? "")"
            case .failed:
                return "failed \(id)\(product.contentVersion.map { " " + $0 } ?? "")"
            }
        }

        /// Sizes as people read them: `512 B`, `41 kB`, `3.2 MB`, `1.50 GB`.
        static func bytes(_ count: Int64) -> String {
            switch count {
            case ..<1000: return "\(count) B"
            case ..<1_000_000: return "\(Int((Double(count) / 1000).rounded())) kB"
            case ..<1_000_000_000: return String(format: "%.1f MB", Double(count) / 1e6)
            default: return String(format: "%.2f GB", Double(count) / 1e9)
            }
        }
    }
}
