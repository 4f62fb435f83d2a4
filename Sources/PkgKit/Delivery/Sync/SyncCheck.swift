import Foundation

/// One product as `sync --check` reports it: what a sync would do (docs/sync.md).
public struct ProductCheck: Sendable, Encodable, Equatable {
    /// The product.
    public var productIdentifier: String
    /// `unchanged`, `update`, `refused` or `failed`.
    public var status: SyncStatus
    /// The version installed now, if any.
    @Nullable public var previousVersion: String? = nil
    /// The catalog's latest version.
    @Nullable public var contentVersion: String? = nil
    /// True when a sync would fetch a delta.
    public var delta: Bool
    /// What a sync would download: header, TOC and the changed files' stored bytes for a delta,
    /// else the package size; 0 when nothing would be.
    public var bytesToDownload: Int64
    /// Why a sync would download the package whole although a version is installed.
    @Nullable public var fullDownloadReason: SyncPlan.FullDownloadReason? = nil
    /// Why it was refused or failed, or warnings.
    public var diagnostics: [Diagnostic]
    /// The network failure that failed it, when one did (see `ProductSyncResult`). Not in the JSON.
    @NotInJSON public var transportFailure: TransportError? = nil

    /// A check of `productIdentifier` with nothing found yet.
    public init(productIdentifier: String, status: SyncStatus = .unchanged, diagnostics: [Diagnostic] = []) {
        self.productIdentifier = productIdentifier
        self.status = status
        delta = false
        bytesToDownload = 0
        self.diagnostics = diagnostics
    }
}

/// What `sync --check` found (`pkgtool sync --check --json`).
public struct SyncCheckReport: Sendable, Encodable, Equatable {
    /// One check per product, sorted by identifier.
    public var products: [ProductCheck]
    /// Body bytes received: the catalog, its signature file, and the header and TOC of each
    /// package a delta would update.
    public var bytesDownloaded: Int64
    /// What is known of the catalog's signature (see `SyncReport.signature`).
    @Nullable public var signature: CatalogSignatureStatus? = nil
    /// Findings about the catalog itself, when no product carries them.
    public var diagnostics: [Diagnostic]
    /// The network failure that stopped the check before any product (see `SyncReport`). Not
    /// in the JSON.
    @NotInJSON public var transportFailure: TransportError? = nil

    /// The check of a run that stopped before any product was looked at.
    init(_ stopped: SyncReport) {
        products = stopped.products.map { stopped in
            var check = ProductCheck(productIdentifier: stopped.productIdentifier, status: stopped.status, diagnostics: stopped.diagnostics)
            check.transportFailure = stopped.transportFailure
            return check
        }
        bytesDownloaded = stopped.bytesDownloaded
        signature = stopped.signature
        diagnostics = stopped.diagnostics
        transportFailure = stopped.transportFailure
    }

    /// A report with these checks.
    public init(products: [ProductCheck], bytesDownloaded: Int64, signature: CatalogSignatureStatus?, diagnostics: [Diagnostic]) {
        self.products = products
        self.bytesDownloaded = bytesDownloaded
        self.signature = signature
        self.diagnostics = diagnostics
    }

    /// `success` when every product is unchanged, `updatesAvailable` when one would be updated
    /// and none refused or failed; else as a sync (`SyncReport.outcome`).
    public var outcome: SyncOutcome {
        SyncReport(products: products.map { ProductSyncResult(productIdentifier: $0.productIdentifier, status: $0.status) },
                   diagnostics: diagnostics).outcome
    }
}

extension SyncClient {
    /// Fetches and verifies the catalog (signature included) and reports what `sync` would do
    /// for each product, writing nothing into `documents` and downloading no package: for a
    /// delta, only the package's header and TOC (a Range request), to count the changed files'
    /// bytes against the installed version. Only cancellation throws, as `OperationCancelled`.
    public func check(_ options: Options = Options()) async throws -> SyncCheckReport {
        try await cancellable(options) { try await runCheck(options) }
    }

    private func runCheck(_ options: Options) async throws -> SyncCheckReport {
        let counting = CountingTransport(transport)
        let selected: [String], fetched: FetchedCatalog
        switch try await start(options, using: counting, progress: nil) {
        case .stopped(let stopped): return SyncCheckReport(stopped)
        case .ready(let products, let catalog): (selected, fetched) = (products, catalog)
        }
        var report = SyncCheckReport(products: [], bytesDownloaded: 0, signature: fetched.signature, diagnostics: [])
        let server = ServerKnowledge(catalogURL: catalogURL)
        for id in selected {
            try options.cancellation?.check()
            var check = ProductCheck(productIdentifier: id)
            do {
                let product = fetched.catalog.product(id)
                let folder = try ProductFolder.open(documents: documents, identifier: id, create: false, locking: false)
                let state = try ProductState.read(folder, latest: product?.latestVersion)
                let plan = SyncPlan.make(situation(id, in: fetched.catalog, state: state, options: options, server: server))
                check.previousVersion = state.installedVersion
                check.contentVersion = plan.contentVersion
                try await judge(plan, folder: folder, options: options, server: server, transport: counting, into: &check)
            } catch let error as OperationCancelled {
                throw error
            } catch is CancellationError {
                throw OperationCancelled()
            } catch let error as any DiagnosableError {
                check.status = error.disposition == .refused ? .refused : .failed
                check.diagnostics.append(error.diagnostic)
                check.transportFailure = error as? TransportError
            }
            report.products.append(check)
        }
        report.bytesDownloaded = counting.bytesReceived
        return report
    }

    /// Fills in `check` for `plan`, fetching a delta's header and TOC to count its bytes.
    private func judge(_ plan: SyncPlan, folder: ProductFolder?, options: Options, server: ServerKnowledge,
                       transport: any HTTPTransport, into check: inout ProductCheck) async throws {
        switch plan {
        case .unchanged(let installed, let latest):
            check.status = .unchanged
            if let have = ContentVersion(installed), let catalog = ContentVersion(latest), have > catalog {
                check.diagnostics.append(Diagnostic(.installedNewer, path: nil,
                    "installed \(installed) is newer than the catalog's latest \(latest): a sync leaves it as it is"))
            }
        case .notListed:
            check.status = .unchanged
        case .refused(let diagnostic):
            check.status = .refused
            check.diagnostics.append(diagnostic)
        case .update(let update):
            check.status = .update
            check.bytesToDownload = update.entry.size
            switch update.method {
            case .full(_, let reason):
                check.fullDownloadReason = reason
            case .delta(let version):
                guard let folder else { return }
                let probe = DeltaProbe(download: DeltaDownload(url: update.url, entry: update.entry, transport: transport,
                                                               retryPolicy: options.retryPolicy, transferPolicy: options.transferPolicy))
                if let bytes = try await probe.bytesToDownload(against: folder, version: version, limits: options.limits) {
                    check.delta = true
                    check.bytesToDownload = bytes
                    server.honoursRange = true
                } else {
                    check.fullDownloadReason = probe.reason
                    if probe.reason == .serverIgnoresRange { server.honoursRange = false }
                }
            }
        }
    }
}

/// A delta's first step on its own, into a scratch file outside Documents: how many bytes the
/// delta would download, or why there would be no delta.
private final class DeltaProbe: @unchecked Sendable {
    // @unchecked: used by one task.
    let download: DeltaDownload
    private(set) var reason: SyncPlan.FullDownloadReason?

    init(download: DeltaDownload) { self.download = download }

    /// Header and TOC plus the changed files' stored bytes; nil when no delta would apply.
    func bytesToDownload(against folder: ProductFolder, version: String, limits: PackageLimits) async throws -> Int64? {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let copy = try SparseCopy(folder: scratch.descriptor, name: "toc.part", path: scratch.path + "/toc.part", size: download.entry.size)
        switch try await download.fetchTableOfContents(into: copy, acceptWhole: false, received: ByteCounter(), limits: limits, progress: nil) {
        case .whole:
            reason = .serverIgnoresRange
            return nil
        case .notApplicable:
            reason = .noTableOfContents
            return nil
        case .ready(let toc, let files, let fetched, _):
            let sizes = DeltaPlan.sizes(of: files), cache = StatCache.read(folder, version: version)
            // Chunked files are matched by path to their installed version, whatever its size.
            let hashAll = files.contains { $0.chunks != nil }
            let installed = try await BlockingWork.run {
                try InstalledTree.scan(folder, version: version, cache: cache) { hashAll || sizes.contains($0) }
            }
            let candidates = DeltaPlan.chunkCandidates(files, installed: installed)
            let bases = try await BlockingWork.run {
                try DeltaPlan.chunkBases(candidates, folder: folder, version: version, cancellation: nil)
            }
            guard let plan = DeltaPlan.make(wanted: files, heapStart: toc.heapStart, packageSize: download.entry.size,
                                            installed: installed, bases: bases) else {
                reason = .noTableOfContents
                return nil
            }
            return fetched + download.ranges(for: plan, toc: toc, fetched: fetched).reduce(0) { $0 + Int64($1.count) }
        }
    }
}

/// A private folder in the system's temporary folder, removed with everything in it.
private final class ScratchFolder {
    let path: String
    let descriptor: Int32

    init() throws {
        var template = Array((NSTemporaryDirectory() + "/pkgkit-check-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw InstallError.io(path: NSTemporaryDirectory(), "cannot create a scratch folder: \(errnoText())") }
        path = String(cString: made)
        descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw InstallError.io(path: path, errnoText()) }
    }

    func remove() {
        try? removeTree(descriptor, name: "toc.part")
        close(descriptor)
        rmdir(path)
    }
}
