import Foundation
import PkgKitSupport
import PkgKitDiagnostics
import PkgKitIdentity
import PkgKitFormat
import PkgKitInstall
import PkgKitCatalog
import PkgKitTransport

/// Brings a Documents folder up to date from a published catalog (docs/sync.md): the on-device
/// half that StoreKit's SKDownload used to be, and the engine of `pkgtool sync`.
///
/// For each product: the catalog's latest version, when newer than the installed record, is
/// downloaded and installed exactly as `Installer` installs a package (same layout, record, lock
/// and atomicity). Everything is verified before it is used: the catalog's signature with a
/// trusted key, each package against its catalog entry (size and sha256, or `tocSHA256` and the
/// TOC's checksums on the delta path), its identifier and version against the entry, and every
/// rule of section 2. A download resumes from `DIR/<id>/.download-<version>.part`; with a version
/// installed and a server that answers Range requests, only the files that changed are fetched.
///
/// ```swift
/// let client = SyncClient(catalogURL: URL(string: "https://cdn.example.com/content/catalog.json")!,
///                         documents: URL.applicationSupportDirectory.appending(path: "Content"))
/// let report = try await client.sync(SyncClient.Options(products: ["com.example.book.chapter1"], trust: .signed(by: key)))
/// ```
///
/// `startSync(_:)` runs it with its progress as an asynchronous sequence, for an app's UI.
///
/// A check costs one conditional request when nothing changed: the last catalog a sync verified is
/// kept in `documents/.pkgtool-catalogs` with the server's `ETag` / `Last-Modified`, and a `304 Not
/// Modified` answer reuses it (verified again with this run's keys).
///
/// A server signed by a private CA is trusted with `SyncClient(catalogURL:documents:trust:)`.
public struct SyncClient: Sendable {
    /// The catalog's URL (`http`, `https` or `file`).
    public var catalogURL: URL
    /// The Documents folder's path.
    public var documents: String
    /// The Documents folder.
    public var documentsURL: URL { URL(fileURLWithPath: documents, isDirectory: true) }
    /// How bytes are fetched.
    public var transport: any HTTPTransport

    /// What to sync, and how.
    public struct Options: Sendable {
        /// The products to bring up to date; empty means every product installed in `documents`,
        /// or being installed there (an interrupted first install's download is finished).
        public var products: [String]
        /// Which catalogs are accepted: signed with one of the trusted keys (any line of the
        /// signature file, any key: a folder signed with an old and a new key verifies with
        /// either), or, only when said so, `.unsigned`.
        public var trust: CatalogTrust
        /// Afterwards keep the current version plus the newest `keep − 1` others.
        public var keep: Int?
        /// The size limit: a catalog entry over it is refused before anything is downloaded.
        public var limits: PackageLimits
        /// False downloads whole packages, never deltas.
        public var delta: Bool
        /// How transient network failures are retried.
        public var retryPolicy: RetryPolicy
        /// How long the server may stay silent before a transfer fails (`--timeout`), and the
        /// clock that measures it and the waits between retries.
        public var transferPolicy: TransferPolicy
        /// Set to stop: a download in progress is kept for the next run, a staging folder removed.
        public var cancellation: Cancellation?
        /// Keeps each version installed, and each download in progress, out of the device's
        /// backups (the default; Apple's data storage guidelines ask it of content that can be
        /// downloaded again): on Apple platforms they are marked `isExcludedFromBackup` (not yet
        /// run on a device). False leaves new versions in backups.
        public var excludeFromBackup = true
        /// Who marks what is excluded from backups: the platform, or a test.
        package var backupExclusion: BackupExclusion = .platform
        /// The installs' `statCacheTime`.
        package var statCacheTime: (@Sendable () -> Int64)?
        /// Told, for each delta planned, how many installed files were read to bring the chunk
        /// index up to date (`ChunkIndex.filesRead`).
        package var filesCut: (@Sendable (Int) -> Void)?
        /// Where the room on the disk is asked before a download: the system's figure, or a test's.
        package var freeSpace: FreeSpace = .system

        /// Options: an update run of every installed product (or of `products`), deltas allowed,
        /// accepting the catalogs `trust` accepts. Trust has no default: pass `.signed(by: key)`
        /// with the publisher's public key, or `.unsigned` to accept any catalog.
        public init(products: [String] = [], trust: CatalogTrust, keep: Int? = nil,
                    limits: PackageLimits = PackageLimits(), delta: Bool = true, retryPolicy: RetryPolicy = RetryPolicy(),
                    transferPolicy: TransferPolicy = TransferPolicy(), cancellation: Cancellation? = nil) {
            self.products = products
            self.trust = trust
            self.keep = keep
            self.limits = limits
            self.delta = delta
            self.retryPolicy = retryPolicy
            self.transferPolicy = transferPolicy
            self.cancellation = cancellation
        }
    }

    /// A client for the catalog at `catalogURL`, installing into the folder `documents` (a file
    /// URL: anything else is a programmer's error, and stops the program).
    public init(catalogURL: URL, documents: URL, transport: any HTTPTransport = StandardTransport()) {
        self.init(catalogURL: catalogURL, documents: FileURLs.path(of: documents), transport: transport)
    }

    /// A client whose HTTPS servers may also be signed by the certificate authorities `trust`
    /// adds to the system's (a staging server's private CA, or the app's own CA, pinned).
    public init(catalogURL: URL, documents: URL, trust: ServerTrust) {
        self.init(catalogURL: catalogURL, documents: FileURLs.path(of: documents), trust: trust)
    }

    /// A client for the catalog at `catalogURL`, installing into the folder at the path `documents`.
    public init(catalogURL: URL, documents: String, transport: any HTTPTransport = StandardTransport()) {
        self.catalogURL = catalogURL
        self.documents = documents
        self.transport = transport
    }

    /// A client installing into the folder at the path `documents`, whose HTTPS servers may also
    /// be signed by the certificate authorities `trust` adds to the system's.
    public init(catalogURL: URL, documents: String, trust: ServerTrust) {
        self.init(catalogURL: catalogURL, documents: documents, transport: StandardTransport(trust: trust))
    }

    /// Runs the sync. Every failure is a value in the report; only cancellation (the task's, or
    /// `options.cancellation`) throws, as `OperationCancelled`, within moments: a transfer in
    /// progress is dropped, an install in progress removes its staging folder, and a download in
    /// progress is kept for the next run to resume.
    ///
    /// `progress` is called with the run's `SyncProgress` values in order, on whichever thread the
    /// work is on, and must return quickly; its last value (phase `finished`, fraction 1) comes
    /// before this returns, unless the run was cancelled. An app's UI reads them from
    /// `startSync(_:)`'s sequence on the main actor instead.
    public func sync(_ options: Options, progress: (@Sendable (SyncProgress) -> Void)? = nil) async throws -> SyncReport {
        let tracker = progress.map(RunProgress.init)
        return try await cancellable(options) { try await run(options, mode: .install, progress: tracker) }
    }

    /// Reports what `sync` would do for each product (a report whose `mode` is `check`): the same
    /// run, catalog and signature verified, that stops before downloading any package and writes
    /// nothing into `documents`. For a delta it fetches only the package's header and TOC (a Range
    /// request), to count the changed files' bytes against the installed version. Only
    /// cancellation throws, as `OperationCancelled`.
    public func check(_ options: Options) async throws -> SyncReport {
        try await cancellable(options) { try await run(options, mode: .check, progress: nil) }
    }

    /// Runs `work` in a task of its own that `options.cancellation` and the caller's own
    /// cancellation both cancel; a cancellation comes out as `OperationCancelled`.
    func cancellable<T: Sendable>(_ options: Options, _ work: @escaping @Sendable () async throws -> T) async throws -> T {
        let task = Task { try await work() }
        options.cancellation?.whenCancelled { task.cancel() }
        return try await withTaskCancellationHandler {
            do {
                return try await task.value
            } catch is CancellationError {
                throw OperationCancelled()
            }
        } onCancel: {
            task.cancel()
        }
    }

    /// How a run starts: the products to look at and the catalog, or a report of why there is
    /// nothing to look at (the Documents folder or the catalog failed).
    enum Start {
        case ready(products: [String], catalog: FetchedCatalog)
        case stopped(SyncReport)
    }

    func start(_ options: Options, kept: KeptCatalog?, using transport: CountingTransport,
                       progress: RunProgress?) async throws -> Start {
        let selected: [String]
        do {
            selected = try options.products.isEmpty ? installedProducts() : Array(Set(options.products)).sorted()
        } catch let error as any DiagnosableError {
            return .stopped(SyncReport(diagnostics: [error.diagnostic]))
        }
        progress?.fetchingCatalog()
        do {
            let fetched = try await Catalog.fetch(from: catalogURL, using: transport, trust: options.trust, kept: kept,
                                                  retryPolicy: options.retryPolicy, transferPolicy: options.transferPolicy)
            return .ready(products: selected, catalog: fetched)
        } catch let error as any DiagnosableError {
            // The catalog itself could not be used: every selected product shares its fate, and
            // says so itself; the report's own list holds it only when no product does.
            let status = SyncStatus(error)
            let failure = error as? TransportError
            var report = SyncReport(products: selected.map { id in
                var result = ProductSyncResult(productIdentifier: id, status: status, diagnostics: [error.diagnostic])
                result.transportFailure = failure
                return result
            }, bytesDownloaded: transport.bytesReceived, diagnostics: selected.isEmpty ? [error.diagnostic] : [])
            report.transportFailure = failure
            return .stopped(report)
        }
    }

    /// A sync, or a check: the same plans and the same execution, which a check stops before
    /// anything is written or a package downloaded.
    private func run(_ options: Options, mode: SyncMode, progress: RunProgress?) async throws -> SyncReport {
        let counting = CountingTransport(transport)
        let selected: [String], fetched: FetchedCatalog
        // A check asks with the kept catalog too (a 304 costs it nothing), but keeps none.
        let kept = KeptCatalog.read(documents: documents, catalogURL: catalogURL)
        switch try await start(options, kept: kept, using: counting, progress: progress) {
        case .stopped(var report):
            report.mode = mode
            progress?.finished()
            return report
        case .ready(let products, let catalog): (selected, fetched) = (products, catalog)
        }
        var report = SyncReport(signature: fetched.signature, mode: mode)
        let client = SyncClient(catalogURL: catalogURL, documents: documents, transport: counting)
        let executor = SyncExecutor(client: client, options: options, server: ServerKnowledge(catalogURL: catalogURL), mode: mode,
                                    progress: progress)
        if let progress { try estimate(selected, in: fetched.catalog, options: options, server: executor.server, into: progress) }
        for id in selected {
            try options.cancellation?.check()
            let product = fetched.catalog.product(id)
            // The folder stays locked from the plan to the end of its execution, so the plan holds.
            // A check only reads it: it takes no lock (which would write one), and waits for none.
            let folder: ProductFolder?
            let state: ProductState
            do {
                // Waiting for another process's lock blocks: off the cooperative threads.
                let documents = documents, cancellation = options.cancellation
                folder = try await BlockingWork.run {
                    try ProductFolder.open(documents: documents, identifier: id, create: false, locking: mode == .install,
                                           cancellation: cancellation)
                }
                state = try ProductState.read(folder, latest: product?.latestVersion)
            } catch let error as any DiagnosableError {
                report.products.append(ProductSyncResult(productIdentifier: id, status: SyncStatus(error),
                                                         diagnostics: [error.diagnostic]))
                progress?.ended(id, completed: false)
                continue
            }
            let plan = SyncPlan.make(situation(id, in: fetched.catalog, state: state, options: options, server: executor.server))
            progress?.expect(plan, of: id)
            let result = try await executor.run(plan, productIdentifier: id, folder: folder, state: state)
            progress?.ended(id, completed: result.status == .installed)
            report.products.append(result)
        }
        report.bytesDownloaded = counting.bytesReceived
        if mode == .install { keep(fetched, replacing: kept) }
        progress?.finished()
        return report
    }

    /// The run's work as the catalog and the folders say it will be, before any product is
    /// touched: each product's plan made from its folder read unlocked (a plan made later, with
    /// the folder locked, corrects it), so that the first values' totals already count every product.
    private func estimate(_ products: [String], in catalog: Catalog, options: Options, server: ServerKnowledge,
                          into progress: RunProgress) throws {
        for id in products {
            try options.cancellation?.check()
            // An unreadable folder is the locked plan's to report; until then it counts as empty.
            let folder = (try? ProductFolder.open(documents: documents, identifier: id, create: false, locking: false)) ?? nil
            let state = (try? ProductState.read(folder, latest: catalog.product(id)?.latestVersion)) ?? .empty
            progress.expect(SyncPlan.make(situation(id, in: catalog, state: state, options: options, server: server)), of: id)
        }
    }

    /// Keeps a catalog fetched with validators for the next run's conditional request. Keeping it
    /// only saves a download: a folder that cannot take it costs the next run a full fetch, no more.
    func keep(_ fetched: FetchedCatalog, replacing old: KeptCatalog?) {
        guard let validators = fetched.validators else { return }
        let kept = KeptCatalog(bytes: fetched.bytes, validators: validators, signatureFile: fetched.signatureFile)
        guard kept != old else { return }
        try? kept.write(documents: documents, catalogURL: catalogURL)
    }

    /// What a product's plan is made from.
    private func situation(_ id: String, in catalog: Catalog, state: ProductState, options: Options, server: ServerKnowledge) -> SyncSituation {
        let product = catalog.product(id)
        // The other products matter only to name near misses of one the catalog does not list.
        return SyncSituation(productIdentifier: id, requested: !options.products.isEmpty, product: product, catalogURL: catalogURL,
                             installedVersion: state.installedVersion, installedFolder: state.installedFolder, partialBytes: state.partialBytes,
                             serverHonoursRange: server.honoursRange, deltaAllowed: options.delta, limits: options.limits,
                             catalogProducts: product == nil ? catalog.products.map(\.productIdentifier) : [])
    }

    /// The products installed in `documents` (a record) or being installed there (a download an
    /// interrupted first install left, which an update run finishes), sorted.
    private func installedProducts() throws -> [String] {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: documents, isDirectory: &isFolder) else { return [] }
        guard isFolder.boolValue else { throw ReadError.io(path: documents, "not a folder") }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: documents)) ?? []
        return names.filter { name in
            guard ProductIdentifier.problem(with: name) == nil else { return false }
            let folder = documents + "/" + name
            return FileManager.default.fileExists(atPath: folder + "/" + ProductFolder.recordName)
                || ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).contains(where: ProductFolder.isDownload)
        }.sorted()
    }
}
