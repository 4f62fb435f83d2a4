import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The options of one publish (the flags of `pkgtool publish`).
public struct PublishOptions: Sendable {
    /// `--sign KEY.pem`: also write `catalog.json.sig`.
    public var signingKey: CatalogSigningKey?
    /// `--keep N`: afterwards keep only the newest N versions of each product.
    public var keep: Int?
    /// The size limits the packages are validated with.
    public var limits: PackageLimits

    /// Options; by default unsigned, keeping every version, with the default 2 GiB limit.
    public init(signingKey: CatalogSigningKey? = nil, keep: Int? = nil, limits: PackageLimits = PackageLimits()) {
        precondition(keep.map { $0 >= 1 } ?? true, "keep must be at least 1")
        self.signingKey = signingKey
        self.keep = keep
        self.limits = limits
    }
}

/// Turns packages into a published folder that any static web server can serve (SPEC section
/// 7): `DIR/<IAPProductIdentifier>/<ContentVersion>.pkg` plus `DIR/catalog.json` (and
/// `catalog.json.sig` when signing).
///
/// Every package is validated, and every immutability rule judged, before anything is written:
/// a refusal leaves the folder exactly as it was. Files appear atomically (written aside,
/// flushed, renamed); the catalog is replaced only after the packages it names are in place,
/// its signature right after it, and `--keep` deletes old files only once the catalog no
/// longer names them. Two publishes into one folder are serialised by a lock on the folder.
public struct Publisher: Sendable {
    /// The published folder (`--to`).
    public var destination: String

    /// A publisher into `destination` (created if missing, one level, never its parents).
    public init(destination: String) {
        var folder = destination
        while folder.count > 1 && folder.hasSuffix("/") { folder.removeLast() }
        self.destination = folder
    }

    /// `DIR/catalog.json`.
    public var catalogPath: String { destination + "/" + Catalog.fileName }
    /// `DIR/catalog.json.sig`.
    public var signaturePath: String { destination + "/" + Catalog.signatureFileName }

    /// Publishes `packages`. Refusals and unreadable inputs come back in the report (status
    /// `refused` or `failed`); throws `PublishError` only when a write fails midway.
    public func publish(_ packages: [String], options: PublishOptions = PublishOptions()) throws -> PublishReport {
        var report = PublishReport(status: .unchanged, destination: destination, catalog: catalogPath, signature: nil,
                                   packages: [], removed: [], diagnostics: [])
        let candidates = examine(packages, options: options, into: &report)
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
            report.diagnostics.append(Diagnostic(.unreadableInput, path: nil, error.description))
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
        for candidate in plan.copies {
            wrote = try copy(candidate) || wrote
            report.packages[candidate.index].status = .published
        }
        let bytes = plan.catalog.encoded()
        if FileManager.default.contents(atPath: catalogPath) != bytes {
            try write(bytes, to: catalogPath)
            wrote = true
        }
        if let signature = plan.signature {
            try write(signature, to: signaturePath)
            wrote = true
        }
        for (id, entry) in plan.removed {
            report.removed.append(RemovedVersion(productIdentifier: id, contentVersion: entry.contentVersion.description,
                                                 path: try removeFile(of: entry, product: id)))
            wrote = true
        }
        return finished(report, status: wrote ? .published : .unchanged)
    }

    // MARK: - Steps

    /// Runs every rule on every package and computes the catalog entries of the valid ones.
    private func examine(_ packages: [String], options: PublishOptions, into report: inout PublishReport) -> [PublishCandidate] {
        let context = RuleContext(purpose: .validate, limits: options.limits)
        var candidates: [PublishCandidate] = []
        for (index, path) in packages.enumerated() {
            var item = PublishedPackage(path: path, status: .skipped, diagnostics: [])
            defer { report.packages.append(item) }
            do {
                let check = try PackageCheck.run(path, context: context, digests: false)
                let info = check.facts.parsedContentInfo
                item.productIdentifier = info?.productIdentifier
                item.contentVersion = info?.contentVersion
                item.fileCount = check.facts.fileCount
                item.payloadBytes = check.facts.payloadBytes
                item.diagnostics = check.diagnostics
                guard check.facts.format != .folder else {
                    item.status = .refused
                    item.diagnostics.append(Diagnostic(.unreadableArchive, path: nil,
                        "\(path) is a folder: publish takes package files; make one with `pkgtool create`"))
                    continue
                }
                guard check.isValid(), let content = check.contentInfo, let version = ContentVersion(content.contentVersion) else {
                    item.status = .refused
                    continue
                }
                let digest = try PackageDigest.compute(path, xar: check.facts.format == .xar)
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
            } catch let error as ReadError {
                let (code, message) = Self.describe(error, path: path)
                item.status = code == .unreadableInput ? .failed : .refused
                item.diagnostics.append(Diagnostic(code, path: nil, message))
            } catch {
                item.status = .failed
                item.diagnostics.append(Diagnostic(.unreadableInput, path: nil, "\(error)"))
            }
        }
        return candidates
    }

    /// Reads the folder's catalog and signature (if any) and plans the publish.
    private func decide(_ candidates: [PublishCandidate], options: PublishOptions) throws -> PublishPlan {
        let bytes = try readIfPresent(catalogPath, limit: Catalog.maximumBytes + 1)
        let existing = try bytes.map { data throws(CatalogError) in try Catalog(data: data) } ?? Catalog()
        let signature = try readIfPresent(signaturePath, limit: 4096)
        return PublishPlan.make(existing: existing, existingBytes: bytes, existingSignature: signature,
                                candidates: candidates, keep: options.keep, key: options.signingKey)
    }

    /// Copies a package to `DIR/<id>/<version>.pkg`, checking the bytes copied against the
    /// validated ones. A file already there with the same bytes (left by a publish that was
    /// interrupted before its catalog) is kept; one with other bytes was never in a catalog
    /// and is replaced. Returns whether anything was written.
    private func copy(_ candidate: PublishCandidate) throws -> Bool {
        let product = destination + "/" + candidate.productIdentifier
        guard mkdir(product, 0o755) == 0 || errno == EEXIST else {
            throw PublishError(path: product, "cannot create the product folder: \(errnoText())")
        }
        let target = destination + "/" + candidate.entry.url
        if FileManager.default.fileExists(atPath: target),
           let there = try? PackageDigest.compute(target, xar: false), there.sha256 == candidate.entry.sha256 {
            return false
        }
        let file: AtomicFile
        do {
            file = try AtomicFile(destination: target)
            let copied = try PackageDigest.stream(candidate.source, xar: false) { try file.output.write($0) }
            guard copied.sha256 == candidate.entry.sha256 else {
                file.discard()
                throw PublishError(path: candidate.source, "the package changed while it was being published: publish again")
            }
            try file.commit()
        } catch let error as WriteError {
            throw PublishError(path: target, Self.describe(error))
        }
        return true
    }

    private func write(_ data: Data, to path: String) throws {
        do {
            let file = try AtomicFile(destination: path)
            try data.withUnsafeBytes { try file.output.write($0) }
            try file.commit()
        } catch let error as WriteError {
            throw PublishError(path: path, Self.describe(error))
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

    /// Opens (and with `create`, makes) the destination and locks it; nil when it does not exist.
    private func openDestination(create: Bool) throws -> Int32? {
        if create, mkdir(destination, 0o755) != 0, errno != EEXIST {
            throw PublishError(path: destination, "cannot create the folder: \(errnoText())")
        }
        let fd = open(destination, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT && !create { return nil }
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

    private func readIfPresent(_ path: String, limit: Int) throws -> Data? {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            if access(path, F_OK) != 0 && errno == ENOENT { return nil }
            throw PublishError(path: path, "cannot read: \(errnoText())")
        }
        defer { try? handle.close() }
        do {
            return try handle.read(upToCount: limit) ?? Data()
        } catch {
            throw PublishError(path: path, "cannot read: \(error)")
        }
    }

    private func finished(_ report: PublishReport, status: PublishStatus) -> PublishReport {
        var report = report
        report.status = status
        report.signature = FileManager.default.fileExists(atPath: signaturePath) ? signaturePath : nil
        return report
    }

    static func describe(_ error: ReadError, path: String) -> (DiagnosticCode, String) {
        if case .io = error { return (error.code, error.description) }
        return (error.code, error.diagnostic.path == nil ? "\(path): \(error.description)" : error.description)
    }

    static func describe(_ error: WriteError) -> String {
        switch error {
        case .io(_, let message): return message
        case .compression(let message): return message
        case .sourceChanged(let path): return "\(path) changed while it was read"
        }
    }
}
