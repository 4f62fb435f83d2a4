import Foundation
import PkgKitSupport
import PkgKitDiagnostics
import PkgKitIdentity
import PkgKitFormat
import PkgKitChecking
import PkgKitCatalog

/// The options of one publish (the flags of `pkgtool publish`).
public struct PublishOptions: Sendable {
    /// `--sign KEY.pem`, once per key: also write `signatures/<sha256 of catalog.json>.sig`, one
    /// line per key in this order (several keys while one is rotated out). Empty: unsigned.
    public var signingKeys: [CatalogSigningKey]
    /// `--keep N`: afterwards keep only the newest N versions of each product.
    public var keep: Int?
    /// The size limits the packages are validated with.
    public var limits: PackageLimits
    /// Set to stop: honoured until the catalog is about to be replaced, with the folder left as
    /// it was (the packages copied so far removed) and `OperationCancelled` thrown; from then on
    /// the publish finishes, so that the catalog and its signature always go together.
    public var cancellation: Cancellation?

    /// Options; by default unsigned, keeping every version, with the default 2 GiB limit. A key
    /// given twice signs once.
    public init(signingKeys: [CatalogSigningKey] = [], keep: Int? = nil, limits: PackageLimits = PackageLimits(),
                cancellation: Cancellation? = nil) {
        precondition(keep.map { $0 >= 1 } ?? true, "keep must be at least 1")
        self.signingKeys = signingKeys.reduce(into: []) { keys, key in if !keys.contains(key) { keys.append(key) } }
        self.keep = keep
        self.limits = limits
        self.cancellation = cancellation
    }
}

/// Turns packages into a published folder that any static web server can serve
/// (docs/publishing.md): `DIR/<IAPProductIdentifier>/<ContentVersion>.pkg` plus `DIR/catalog.json` (and, when
/// signing, `DIR/signatures/<sha256 of catalog.json>.sig`).
///
/// Every package is validated, and every immutability rule judged, before anything is written:
/// a refusal leaves the folder exactly as it was. Files appear atomically (written aside,
/// flushed, renamed); the catalog is replaced only after the packages it names and its
/// signature file are in place, and old files (versions `--keep` drops, signature files beyond
/// the newest 32) are deleted only once the catalog no longer needs them. Two publishes into
/// one folder are serialised by a lock on the folder.
public struct Publisher: Sendable {
    /// The published folder (`--to`).
    public var destination: String

    /// A publisher into `destination` (created, with its missing parents, when a publish goes ahead).
    public init(destination: String) {
        var folder = destination
        while folder.count > 1 && folder.hasSuffix("/") { folder.removeLast() }
        self.destination = folder
    }

    /// `DIR/catalog.json`.
    public var catalogPath: String { destination + "/" + Catalog.fileName }
    /// `DIR/catalog.json.sig`, which older pkgtool wrote: removed by a signed publish.
    var legacySignaturePath: String { destination + "/" + Catalog.legacySignatureFileName }
    /// `DIR/signatures/`.
    package var signatures: SignatureFolder { SignatureFolder(destination: destination) }

    /// Publishes `packages`. Refusals and unreadable inputs come back in the report (status
    /// `refused` or `failed`, with the folder unchanged); throws `PublishError` (`io-error`) only
    /// when a write fails midway, and `OperationCancelled` when `options.cancellation` stopped it.
    public func publish(_ packages: [String], options: PublishOptions = PublishOptions()) throws -> PublishReport {
        var report = PublishReport(status: .unchanged, destination: destination, catalog: catalogPath, signature: nil,
                                   packages: [], removed: [], diagnostics: [])
        let candidates = try examine(packages, options: options, into: &report)
        if report.packages.contains(where: { $0.status == .failed || $0.status == .refused }) {
            return finished(report, status: report.packages.contains { $0.status == .failed } ? .failed : .refused)
        }

        var folder = try openDestination(create: false)
        defer { if let folder { close(folder) } }
        var plan: PublishPlan
        do {
            plan = try decide(candidates, options: options)
            if folder == nil && !plan.isRefused {
                // Created only now that the publish is known to go ahead; decided again under
                // the lock, in case another publish got there first.
                folder = try openDestination(create: true)
                plan = try decide(candidates, options: options)
            }
        } catch let error as CatalogError {
            report.diagnostics.append(error.diagnostic)
            return finished(report, status: .refused)
        } catch let error as PublishError {
            report.diagnostics.append(error.diagnostic)
            return finished(report, status: .failed)
        }
        if plan.isRefused {
            for (index, diagnostics) in plan.refusals {
                report.packages[index].status = .refused
                report.packages[index].diagnostics += diagnostics
            }
            report.diagnostics += plan.folderRefusals
            return finished(report, status: .refused)
        }
        var wrote = false
        for index in plan.unchanged { report.packages[index].status = .unchanged }
        // What this run adds to the folder before its catalog names it: taken away again when
        // the run is stopped, since no catalog will name it.
        var made: [String] = []
        do {
            for candidate in plan.copies {
                wrote = try copy(candidate, cancellation: options.cancellation, made: &made) || wrote
                report.packages[candidate.index].status = .published
            }
            try options.cancellation?.check()
        } catch let stopped as OperationCancelled {
            remove(made)
            throw stopped
        }
        let bytes = plan.catalog.encoded()
        // Signatures before the catalog they sign: a server never serves a catalog without its
        // signature file, whatever moment it reads the folder at.
        var outdated: [String] = []
        if !options.signingKeys.isEmpty {
            let written = try signatures.write(plan.signatureFiles)
            let (recorded, removed) = try signatures.record(written: written, current: CatalogSignature.digest(of: bytes))
            wrote = wrote || recorded || !written.isEmpty
            outdated = removed
        }
        if try PublishedFile.read(catalogPath, limit: Catalog.maximumBytes + 1) != bytes {
            try PublishedFile.write(bytes, to: catalogPath)
            wrote = true
        }
        if !outdated.isEmpty {
            try signatures.remove(outdated)
            wrote = true
        }
        if !options.signingKeys.isEmpty, unlink(legacySignaturePath) == 0 { wrote = true }
        for (id, entry) in plan.removed {
            report.removed.append(RemovedVersion(productIdentifier: id, contentVersion: entry.contentVersion.description,
                                                 path: try removeFile(of: entry, product: id)))
            wrote = true
        }
        return finished(report, status: wrote ? .published : .unchanged)
    }

    // MARK: - Steps

    /// Runs every rule on every package and computes the catalog entries of the valid ones.
    private func examine(_ packages: [String], options: PublishOptions, into report: inout PublishReport) throws -> [PublishCandidate] {
        let context = RuleContext(purpose: .validate, limits: options.limits)
        var candidates: [PublishCandidate] = []
        for (index, path) in packages.enumerated() {
            var item = PublishedPackage(path: path, status: .skipped, diagnostics: [])
            defer { report.packages.append(item) }
            do {
                let check = try PackageCheck.run(path, context: context, digests: false, cancellation: options.cancellation)
                let info = check.facts.parsedContentInfo
                item.productIdentifier = info?.productIdentifier
                item.contentVersion = info?.contentVersion
                item.format = check.facts.format
                item.fileCount = check.facts.fileCount
                item.payloadBytes = check.facts.payloadBytes
                item.diagnostics = check.diagnostics
                guard check.facts.format != .folder else {
                    item.status = .refused
                    item.diagnostics.append(Diagnostic(.unreadableArchive, path: nil,
                        "a folder, not a package file: publish takes package files; make one with `pkgtool create`"))
                    continue
                }
                guard check.isValid(), let content = check.contentInfo, let version = ContentVersion(content.contentVersion) else {
                    item.status = .refused
                    continue
                }
                let digest = try PackageDigest.compute(path, xar: check.facts.format == .xar, cancellation: options.cancellation)
                if check.facts.format == .xar, let warning = try? ChecksumCoverage.read(path).diagnostic { item.diagnostics.append(warning) }
                let url = content.productIdentifier + "/" + content.contentVersion + ".pkg"
                let entry = CatalogVersion(contentVersion: version, url: url, size: digest.size, sha256: digest.sha256,
                                           tocSHA256: digest.tocSHA256, fileCount: check.facts.fileCount,
                                           payloadBytes: check.facts.payloadBytes)
                item.url = url
                item.publishedPath = destination + "/" + url
                item.size = digest.size
                item.sha256 = digest.sha256
                item.tocSHA256 = digest.tocSHA256
                candidates.append(PublishCandidate(index: index, source: path, productIdentifier: content.productIdentifier, entry: entry))
            } catch let stopped as OperationCancelled {
                throw stopped
            } catch let error as ReadError {
                item.status = error.code == .unreadableInput ? .failed : .refused
                item.diagnostics.append(error.diagnostic)
            } catch let error as PublishError {
                item.status = .failed
                item.diagnostics.append(error.diagnostic)
            } catch {
                item.status = .failed
                item.diagnostics.append(Diagnostic(.unreadableInput, path: path, "\(error)"))
            }
        }
        return candidates
    }

    /// Reads the folder's catalog and its signature (if any) and plans the publish.
    private func decide(_ candidates: [PublishCandidate], options: PublishOptions) throws -> PublishPlan {
        let bytes = try PublishedFile.read(catalogPath, limit: Catalog.maximumBytes + 1)
        let existing: Catalog
        do {
            existing = try bytes.map { data throws(CatalogError) in try Catalog(data: data) } ?? Catalog()
        } catch {
            throw CatalogError(error.reason, path: catalogPath)
        }
        let published = PublishedSignatures(current: try bytes.flatMap { data throws(PublishError) in try signatures.read(CatalogSignature.digest(of: data)) },
                                            legacy: try PublishedFile.read(legacySignaturePath, limit: CatalogSignature.maximumBytes + 1))
        return PublishPlan.make(folder: destination, existing: existing, existingBytes: bytes, signatures: published,
                                candidates: candidates, keep: options.keep, keys: options.signingKeys)
    }

    /// Copies a package to `DIR/<id>/<version>.pkg`, checking the bytes copied against the
    /// validated ones. A file already there with the same bytes (left by a publish that was
    /// killed before its catalog) is kept; one with other bytes was never in a catalog and is
    /// replaced. Returns whether anything was written; adds the folders and file it created to
    /// `made`. A set `cancellation` stops the copy, which then leaves nothing.
    private func copy(_ candidate: PublishCandidate, cancellation: Cancellation?, made: inout [String]) throws -> Bool {
        made += try makeOutputFolders(destination + "/" + candidate.productIdentifier)
        let target = destination + "/" + candidate.entry.url
        if FileManager.default.fileExists(atPath: target),
           let there = try? PackageDigest.compute(target, xar: false), there.sha256 == candidate.entry.sha256 {
            return false
        }
        let file: AtomicFile
        do {
            file = try AtomicFile(destination: target)
            let copied = try PackageDigest.stream(candidate.source, xar: false) { block in
                try cancellation?.check()
                try file.output.write(block)
            }
            guard copied.sha256 == candidate.entry.sha256 else {
                file.discard()
                throw PublishError(path: candidate.source, "changed while it was being published: publish again", code: .unreadableInput)
            }
            try file.commit()
        } catch let error as WriteError {
            throw PublishError(path: target, PublishedFile.describe(error))
        }
        made.append(target)
        return true
    }

    /// Removes what `copy` made, newest first: files, then the folders that held them. Nothing
    /// names them yet, so a web server reading the folder never misses them.
    private func remove(_ made: [String]) {
        for path in made.reversed() where unlink(path) != 0 {
            rmdir(path)
        }
    }

    /// Deletes the file of an entry `--keep` dropped, when it is this folder's own
    /// `<id>/<version>.pkg`; returns its path, or nil when the entry pointed elsewhere.
    private func removeFile(of entry: CatalogVersion, product: String) throws -> String? {
        guard entry.url == product + "/" + entry.contentVersion.description + ".pkg" else { return nil }
        let path = destination + "/" + entry.url
        guard unlink(path) == 0 || errno == ENOENT else { throw PublishError(path: path, "cannot remove: \(errnoText())") }
        return path
    }

    // MARK: - Folder

    /// Opens (and with `create`, makes, with its missing parents) the destination and locks
    /// it; nil when it does not exist.
    private func openDestination(create: Bool) throws -> Int32? {
        if create { try makeOutputFolders(destination) }
        let fd = open(destination, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else {
            // Not there, or a file stands in the way: makeFolders says which, if it goes ahead.
            if (errno == ENOENT || errno == ENOTDIR) && !create { return nil }
            throw PublishError(path: destination, errnoText())
        }
        while flock(fd, LOCK_EX) != 0 {
            if errno == EINTR { continue }
            let message = errnoText()
            close(fd)
            throw PublishError(path: destination, "cannot lock: \(message)")
        }
        return fd
    }

    private func finished(_ report: PublishReport, status: PublishStatus) -> PublishReport {
        var report = report
        report.status = status
        report.signature = signaturePath()
        return report
    }

    /// The signature file of the catalog in the folder now, if it has one.
    private func signaturePath() -> String? {
        if let bytes = try? PublishedFile.read(catalogPath, limit: Catalog.maximumBytes + 1) {
            let path = signatures.filePath(CatalogSignature.digest(of: bytes))
            if access(path, F_OK) == 0 { return path }
        }
        return access(legacySignaturePath, F_OK) == 0 ? legacySignaturePath : nil
    }
}
