import Foundation

/// Brings a Documents folder up to date from a published catalog (SPEC section 7): the on-device
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
///                         documents: documents.path)
/// let report = try await client.sync(SyncClient.Options(products: ["com.example.book.chapter1"], trustedKeys: [key]))
/// ```
public struct SyncClient: Sendable {
    /// The catalog's URL (`http`, `https` or `file`).
    public var catalogURL: URL
    /// The Documents folder.
    public var documents: String
    /// How bytes are fetched.
    public var transport: any HTTPTransport

    /// What to sync, and how.
    public struct Options: Sendable {
        /// The products to bring up to date; empty means every product installed in `documents`.
        public var products: [String]
        /// The public keys a line of the catalog's signature file must verify with (any line,
        /// any key: a folder signed with an old and a new key verifies with either); empty
        /// accepts an unsigned catalog.
        public var trustedKeys: [CatalogVerifyingKey]
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

        /// Options; by default an update run of every installed product, deltas allowed.
        public init(products: [String] = [], trustedKeys: [CatalogVerifyingKey] = [], keep: Int? = nil,
                    limits: PackageLimits = PackageLimits(), delta: Bool = true, retryPolicy: RetryPolicy = RetryPolicy(),
                    transferPolicy: TransferPolicy = TransferPolicy(), cancellation: Cancellation? = nil) {
            self.products = products
            self.trustedKeys = trustedKeys
            self.keep = keep
            self.limits = limits
            self.delta = delta
            self.retryPolicy = retryPolicy
            self.transferPolicy = transferPolicy
            self.cancellation = cancellation
        }
    }

    /// A client for the catalog at `catalogURL`, installing into `documents`.
    public init(catalogURL: URL, documents: String, transport: any HTTPTransport = StandardTransport()) {
        self.catalogURL = catalogURL
        self.documents = documents
        self.transport = transport
    }

    /// Runs the sync. Every failure is a value in the report; only cancellation (the task's, or
    /// `options.cancellation`) throws, as `OperationCancelled`.
    public func sync(_ options: Options = Options(), progress: (@Sendable (SyncProgress) -> Void)? = nil) async throws -> SyncReport {
        let work = Task { try await run(options, progress: progress) }
        options.cancellation?.whenCancelled { work.cancel() }
        return try await withTaskCancellationHandler {
            do {
                return try await work.value
            } catch is CancellationError {
                throw OperationCancelled()
            }
        } onCancel: {
            work.cancel()
        }
    }

    private func run(_ options: Options, progress: (@Sendable (SyncProgress) -> Void)?) async throws -> SyncReport {
        var report = SyncReport()
        let selected: [String]
        do {
            selected = options.products.isEmpty ? try installedProducts() : Array(Set(options.products)).sorted()
        } catch let error as InstallError {
            report.diagnostics.append(Diagnostic(.unreadableInput, path: documents, error.description))
            return report
        }
        progress?(SyncProgress(productIdentifier: nil, phase: .catalog, done: 0, total: 0))
        let fetched: FetchedCatalog
        do {
            fetched = try await Catalog.fetch(from: catalogURL, using: transport, trustedKeys: options.trustedKeys,
                                              retryPolicy: options.retryPolicy, transferPolicy: options.transferPolicy)
            report.bytesDownloaded += Int64(fetched.bytes.count)
        } catch let error as SignatureError {
            return Self.catalogFailed(error.diagnostic, status: .refused, products: selected)
        } catch let error as CatalogError {
            return Self.catalogFailed(error.diagnostic, status: .refused, products: selected)
        } catch let error as TransportError {
            return Self.catalogFailed(error.diagnostic, status: .failed, products: selected)
        }
        for id in selected {
            try options.cancellation?.check()
            let result = try await ProductSync(client: self, options: options, catalog: fetched, productIdentifier: id,
                                               requested: !options.products.isEmpty, progress: progress).run()
            report.bytesDownloaded += result.bytesDownloaded
            report.products.append(result)
        }
        return report
    }

    /// The products with a record in `documents`, sorted.
    private func installedProducts() throws -> [String] {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: documents, isDirectory: &isFolder) else { return [] }
        guard isFolder.boolValue else { throw InstallError.io(path: documents, "not a folder") }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: documents)) ?? []
        return names.filter { name in
            ProductIdentifier.problem(with: name) == nil
                && FileManager.default.fileExists(atPath: documents + "/" + name + "/" + ProductFolder.recordName)
        }.sorted()
    }

    /// The report when the catalog itself could not be used: every selected product shares its fate.
    private static func catalogFailed(_ diagnostic: Diagnostic, status: SyncStatus, products: [String]) -> SyncReport {
        SyncReport(products: products.map { ProductSyncResult(productIdentifier: $0, status: status, diagnostics: [diagnostic]) },
                   diagnostics: [diagnostic])
    }
}
