import ArgumentParser
import Foundation
import PkgKitDiagnostics
import PkgKit

extension Pkgtool {
    /// `pkgtool sync`: a Documents folder brought up to date from a published catalog.
    struct Sync: AsyncReportingCommand {
        static let configuration = CommandConfiguration(
            commandName: "sync",
            abstract: "Bring a Documents folder up to date from a published catalog, downloading only what changed.",
            discussion: """
            SOURCE is the catalog's URL (http://, https://) or a published folder or catalog.json path. Each \
            --product, or without any every product already installed in DIR, is brought to the catalog's \
            latest version and installed exactly as extract installs (layout, record, lock, atomicity, --keep); \
            sync never downgrades. Everything is verified before it is used: the catalog's signature with \
            --trust, each package against its catalog entry, and every rule. Downloads resume from \
            DIR/<id>/.download-<version>.part; with a version installed and a server that answers Range \
            requests, only the files that changed are fetched (--no-delta: whole packages). A transfer \
            that receives nothing for --timeout seconds fails and is retried; SIGINT and SIGTERM stop sync \
            within 2 seconds, the previous versions current and a download kept to resume. --check reports \
            what a sync would do without writing anything or downloading a package. --adopt FOLDER \
            --adopt-version V (with one --product) makes content already on a device version V of the \
            product, each file verified against V's table of contents and only those that differ downloaded. \
            Exit 0 installed or unchanged, 1 refused, 2 could not be done, 3 updates available (--check).
            """)

        @Argument(help: "The catalog: its URL (a published folder's URL with or without its slash), or a published folder or catalog.json path.")
        var source: String

        @Option(name: .customLong("documents"), help: ArgumentHelp("The Documents folder to install into.", valueName: "DIR"))
        var documents: String

        @Option(name: [.customLong("product"), .customLong("product-id")], help: ArgumentHelp("A product to install or update (repeatable). Default: every installed product.", valueName: "ID"))
        var products: [String] = []

        @Option(help: ArgumentHelp("Refuse a catalog whose signature does not verify with this Ed25519 public key (PEM). Repeatable: any of the keys will do.", valueName: "KEY.pub.pem"))
        var trust: [String] = []

        @OptionGroup var keep: KeepOptions

        @Flag(name: .customLong("no-delta"), help: "Always download whole packages.")
        var noDelta = false

        @Option(help: ArgumentHelp("Fail a transfer that receives nothing for this many seconds (it is retried a few times).", valueName: "SECONDS"))
        var timeout: Double = 30

        @Option(name: .customLong("ca-cert"), help: ArgumentHelp("Also trust the certificate authorities in this PEM file for HTTPS (a staging server's private CA), on top of the system's. Repeatable.", valueName: "PEM"))
        var caCerts: [String] = []

        @Flag(help: "Report what a sync would do, writing nothing and downloading no package (exit 3 when updates are available).")
        var check = false

        @Option(help: ArgumentHelp("Make this folder (a package's Contents/, or a folder holding Contents/ and ContentInfo.plist) the installed --adopt-version of the one --product, downloading only the files that differ. The folder is only read.", valueName: "FOLDER"))
        var adopt: String?

        @Option(name: .customLong("adopt-version"), help: ArgumentHelp("The version --adopt installs (one the catalog lists).", valueName: "VERSION"))
        var adoptVersion: String?

        @OptionGroup var limit: LimitOptions
        @OptionGroup var outputOptions: OutputOptions
        @ParentCommand var root: Pkgtool

        var subject: String { source }
        /// A first install has no previous version to stay current: the words say what there is.
        var leftWhenInterrupted: String {
            let resumes = "(a download in progress resumes next time)"
            let files = FileManager.default
            func installed(_ id: String) -> Bool { files.fileExists(atPath: documents + "/" + id + "/" + Installer.recordName) }
            // Without --product, the products being installed are the folders holding a download and no record.
            let installing = products.isEmpty
                ? ((try? files.contentsOfDirectory(atPath: documents)) ?? []).filter { id in
                    !installed(id) && ((try? files.contentsOfDirectory(atPath: documents + "/" + id)) ?? []).contains(where: ProductFolder.isDownload)
                }
                : Array(Set(products.filter { !installed($0) }))
            if !products.isEmpty && installing.count == Set(products).count { return "nothing was installed \(resumes)" }
            return installing.isEmpty ? "the previous versions stay current \(resumes)" : "nothing new was installed; installed versions stay current \(resumes)"
        }
        /// docs/sync.md: stopped within 2 seconds in every state.
        var interruptionGrace: Double { 1.5 }

        func validate() throws {
            guard timeout > 0, timeout <= 86_400 else { throw ValidationError("--timeout must be a number of seconds above 0 and at most 86400") }
            guard (adopt == nil) == (adoptVersion == nil) else { throw ValidationError("--adopt and --adopt-version go together") }
            if adopt != nil {
                guard Set(products).count == 1 else { throw ValidationError("--adopt needs exactly one --product: the product whose content the folder is") }
                guard !check else { throw ValidationError("--adopt cannot be combined with --check") }
            }
        }

        func usageProblem(in error: any Error) -> String? {
            guard let problem = error as? CatalogLocation.Problem else { return nil }
            guard case .package(let source) = problem else { return problem.description }
            return "\(source) is a package, not a catalog: install a package file with 'pkgtool extract \(source) --documents DIR'"
        }

        func execute(_ output: OutputOptions, _ cancellation: Cancellation) async throws -> SyncReport {
            let catalogURL = try CatalogLocation.url(for: source)
            var trustedKeys: [CatalogVerifyingKey] = []
            for trust in trust {
                guard let pem = try? String(contentsOfFile: trust, encoding: .utf8) else {
                    throw CommandFailure(.unreadableInput, path: trust, "cannot read the trusted key")
                }
                do {
                    trustedKeys.append(try CatalogVerifyingKey(pem: pem))
                } catch {
                    throw CommandFailure(.unreadableInput, path: trust, "\(error.reason): nothing was downloaded")
                }
            }
            // Without --trust, the command line chooses to accept an unsigned catalog (and says so).
            let options = SyncClient.Options(products: products, trust: CatalogTrust.signed(byAnyOf: trustedKeys) ?? .unsigned,
                                             keep: keep.count, limits: limit.limits,
                                             delta: !noDelta,
                                             transferPolicy: TransferPolicy(idleTimeout: .milliseconds(Int64(timeout * 1000))),
                                             cancellation: cancellation)
            let client = SyncClient(catalogURL: catalogURL, documents: documents, trust: try ServerTrust(pemFiles: caCerts))
            let advice = TransportAdvice(caCerts: caCerts)
            if check { return advice.advising(try await client.check(options)) }
            let bar = ProgressBar(enabled: !output.json && !output.quiet)
            defer { bar.finish() }
            let progress: @Sendable (SyncProgress) -> Void = { step in
                // The whole run's bytes (downloads and installs), under the product at work.
                if step.phase != .finished { bar.update(step.bytesDone, of: step.bytesTotal, label: step.productIdentifier) }
            }
            if let adopt, let adoptVersion, let product = products.first {
                return advice.advising(try await client.adopt(adopt, as: adoptVersion, of: product, options: options, progress: progress))
            }
            return advice.advising(try await client.sync(options, progress: progress))
        }

        /// Every product asked for shares the failure.
        func report(for failure: any DiagnosableError) -> SyncReport {
            let (status, failure) = (SyncStatus(failure), failure.diagnostic)
            return SyncReport(products: products.map { ProductSyncResult(productIdentifier: $0, status: status, diagnostics: [failure]) },
                              diagnostics: products.isEmpty ? [failure] : [], mode: check ? .check : .install)
        }

        func printText(_ report: SyncReport, _ output: OutputOptions) {
            let diagnostics = report.diagnostics + report.products.flatMap(\.diagnostics)
            let lines = report.products.map { report.mode == .check ? checkLine(for: $0) : line(for: $0) }
            var shown = Set<Diagnostic>()
            for diagnostic in diagnostics where shown.insert(diagnostic).inserted {
                Console.print([diagnostic], file: source, quiet: output.quiet)
            }
            guard !output.quiet else { return }
            if report.signature == .unchecked {
                Console.err("note: the catalog is signed, but its signature was not checked: pass --trust KEY.pub.pem (the publisher's public key) to check it")
            }
            lines.forEach(Console.out)
            if lines.isEmpty && diagnostics.isEmpty {
                Console.out("nothing to \(check ? "check" : "sync"): no product is installed in \(documents) (name one with --product)")
            }
        }

        /// `installed com.x 1.1 (was 1.0, delta: 3 files, 41 kB downloaded)`, and as `extract`
        /// says it, `; removed 1.0` when `--keep` removed version folders.
        private func line(for product: ProductSyncResult) -> String {
            let line = statusLine(for: product)
            guard !product.removedVersions.isEmpty else { return line }
            return line + "; removed \(product.removedVersions.joined(separator: ", "))"
        }

        private func statusLine(for product: ProductSyncResult) -> String {
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
                    if let reason = product.fullDownloadReason, reason != .resuming { details.append("full download: \(reason.words)") }
                }
                return "installed \(id) \(version) (\(details.joined(separator: ", ")))"
            case .unchanged, .update:
                let current = product.previousVersion ?? version
                if !product.listed {
                    guard product.previousVersion != nil else { return "not installed \(id) (this catalog does not list it)" }
                    return "unchanged \(id) \(current) (this catalog does not list it)"
                }
                return "unchanged \(id) \(current)"
            case .refused:
                return "refused \(Self.name(id, product.contentVersion)): nothing installed"
            case .failed:
                // A full disk needs space freed first, which its diagnostic says.
                let diskFull = product.diagnostics.contains { $0.code == .insufficientSpace || $0.message.contains(FreeSpace.fullDiskAdvice) }
                let retry = !diskFull && TransportAdvice.retryMayHelp(product.transportFailure) ? "; run sync again" : ""
                return "failed \(Self.name(id, product.contentVersion)): nothing installed\(retry)"
            }
        }

        /// `update com.x 1.0 -> 1.1 (delta, 1.7 MB to download)`.
        private func checkLine(for product: ProductSyncResult) -> String {
            let id = product.productIdentifier, version = product.contentVersion ?? "?"
            switch product.status {
            case .update:
                let from = product.previousVersion.map { "\($0) -> " } ?? ""
                var how = product.delta ? "delta" : "full"
                if let reason = product.fullDownloadReason { how += ": \(reason.words)" }
                let resumed = product.resumedFrom.map { ", \(Self.bytes($0)) already downloaded" } ?? ""
                return "update \(id) \(from)\(version) (\(how), \(Self.bytes(product.bytesToDownload)) to download\(resumed))"
            case .unchanged, .installed:
                return "unchanged \(id) \(product.previousVersion ?? version)"
            case .refused:
                return "refused \(Self.name(id, product.contentVersion))"
            case .failed:
                return "failed \(Self.name(id, product.contentVersion))"
            }
        }

        /// `com.x 1.1`, or `com.x` when the version is not known.
        private static func name(_ id: String, _ version: String?) -> String {
            id + (version.map { " " + $0 } ?? "")
        }

        /// Sizes as people read them: `512 B`, `41 kB`, `3.2 MB`, `1.50 GB`.
        static func bytes(_ count: Int64) -> String { ByteSize.human(count) }
    }
}
