import Foundation
import PkgKitSupport
import PkgKitDiagnostics
import PkgKitIdentity
import PkgKitFormat
import PkgKitInstall
import PkgKitCatalog
import PkgKitTransport

/// Adopting content an app already has: what devices downloaded through StoreKit's SKDownload
/// becomes an installed version, so that their next update is a delta instead of a download of
/// everything again.
extension SyncClient {
    /// Makes the content in `folder` installed version `version` of `productIdentifier`, verified
    /// file by file against that version's table of contents from the catalog.
    ///
    /// `folder` is what `SKDownload.contentURL` pointed at (a folder holding `Contents/` and
    /// `ContentInfo.plist`), or the `Contents/` tree alone wherever the app copied it. It is only
    /// read, never changed or moved: its files are copied into the product folder and the app
    /// deletes it once the report says `installed`.
    ///
    /// The catalog is fetched and verified as `sync` does (`options.trust`), then version
    /// `version`'s header and table of contents (one Range request, checked against the
    /// catalog's `tocSHA256`). Every file of the folder is read and hashed; a file whose sha1 is
    /// the one the table of contents gives is used, whatever its name; a missing file, or one
    /// whose bytes differ (whatever its size or name), is fetched as a delta update fetches it; a
    /// file the version does not have is not installed. The version is then installed exactly as
    /// `sync` installs it (same layout, record, lock and atomicity). When the folder holds the
    /// version whole, nothing is downloaded beyond the catalog and the table of contents.
    ///
    /// Refused (status `refused`, nothing installed) when the catalog lists no such version
    /// (`unknown-product`), when the product already has this version or a newer one installed
    /// (`version-not-bumped`), or when the folder's own `ContentInfo.plist` names another product
    /// (`product-identifier-mismatch`). A folder of an older version may be adopted as a newer
    /// one: only the files that changed between them are downloaded. `options.products` is ignored. Every failure is a value in the report (one product); only cancellation throws,
    /// as `OperationCancelled`.
    ///
    /// ```swift
    /// let report = try await client.adopt(oldFolder, as: "1.0", of: "com.example.book.chapter1",
    ///                                     options: SyncClient.Options(trust: .signed(by: key)))
    /// if report.products.first?.status == .installed { try FileManager.default.removeItem(at: oldFolder) }
    /// ```
    public func adopt(_ folder: URL, as version: String, of productIdentifier: String, options: Options,
                      progress: (@Sendable (SyncProgress) -> Void)? = nil) async throws -> SyncReport {
        try await adopt(folder.path, as: version, of: productIdentifier, options: options, progress: progress)
    }

    /// `adopt(_:as:of:options:progress:)` with the folder's path.
    public func adopt(_ folderPath: String, as version: String, of productIdentifier: String, options: Options,
                      progress: (@Sendable (SyncProgress) -> Void)? = nil) async throws -> SyncReport {
        var options = options
        options.products = [productIdentifier]
        let adopting = options, tracker = progress.map(RunProgress.init)
        return try await cancellable(options) {
            defer { tracker?.finished() }
            return try await adoption(folderPath, as: version, of: productIdentifier, options: adopting, progress: tracker)
        }
    }

    /// The adoption's run: the folder and the arguments checked, the catalog fetched, the plan
    /// made (a delta from a copy of the folder), carried out by the sync's own executor.
    private func adoption(_ path: String, as version: String, of id: String, options: Options,
                          progress: RunProgress?) async throws -> SyncReport {
        var result = ProductSyncResult(productIdentifier: id, contentVersion: version)
        func stopped(_ diagnostic: Diagnostic, _ status: SyncStatus) -> SyncReport {
            result.status = status
            result.diagnostics.append(diagnostic)
            return SyncReport(products: [result])
        }
        if let problem = ProductIdentifier.problem(with: id) { return stopped(Diagnostic(.invalidProductIdentifier, path: nil, problem), .refused) }
        guard let wanted = ContentVersion(version) else {
            return stopped(Diagnostic(.invalidContentVersion, path: nil, ContentVersion.problem(with: version) ?? version), .refused)
        }
        let adopted: AdoptedFolder
        do {
            adopted = try AdoptedFolder.locate(path)
        } catch let error as any DiagnosableError {
            return stopped(error.diagnostic, SyncStatus(error))
        }
        if let mismatch = Self.mismatch(adopted, id: id, path: path) { return stopped(mismatch, .refused) }

        let counting = CountingTransport(transport)
        let kept = KeptCatalog.read(documents: documents, catalogURL: catalogURL)
        let fetched: FetchedCatalog
        switch try await start(options, kept: kept, using: counting, progress: progress) {
        case .stopped(let report): return report
        case .ready(_, let catalog): fetched = catalog
        }
        var report = SyncReport(signature: fetched.signature)
        defer { keep(fetched, replacing: kept) }
        guard let product = fetched.catalog.product(id) else {
            let listed = fetched.catalog.products.map(\.productIdentifier)
            report.products = [ProductSyncResult(productIdentifier: id, status: .refused, contentVersion: version, diagnostics: [
                Diagnostic(.unknownProduct, path: nil, SyncPlan.unknownProductMessage(id, listed: listed))])]
            report.bytesDownloaded = counting.bytesReceived
            return report
        }
        guard let entry = product.version(wanted) else {
            let listed = product.versions.map(\.contentVersion.description).joined(separator: ", ")
            report.products = [ProductSyncResult(productIdentifier: id, status: .refused, contentVersion: version, diagnostics: [
                Diagnostic(.unknownProduct, path: nil,
                           "the catalog lists \(id) but not its version \(version) (it lists \(listed)): adopt a version it lists, or publish \(version) first")])]
            report.bytesDownloaded = counting.bytesReceived
            return report
        }
        report.products = [try await install(adopted, as: entry, of: product, options: options, progress: progress, transport: counting)]
        report.bytesDownloaded = counting.bytesReceived
        return report
    }

    /// What the folder's own ContentInfo.plist, when it has one, says against the product: a
    /// folder of another product is a mistake worth stopping at. Another version is not: its
    /// files are verified against the version adopted, and only those that differ are fetched.
    private static func mismatch(_ adopted: AdoptedFolder, id: String, path: String) -> Diagnostic? {
        guard let named = adopted.contentInfo?.productIdentifier, named != id else { return nil }
        return Diagnostic(.productIdentifierMismatch, path: path + "/" + ContentInfo.fileName,
                          "the folder holds \(named)'s content, not \(id)'s: adopt it as \(named), or give \(id)'s folder")
    }

    /// Adopts `adopted` as `entry` of `product`, with the product folder locked throughout: the
    /// plan is the sync's own for that entry, made a delta from a copy of the folder in the
    /// product folder (removed afterwards, whatever happened).
    private func install(_ adopted: AdoptedFolder, as entry: CatalogVersion, of product: CatalogProduct, options: Options,
                       progress: RunProgress?, transport: CountingTransport) async throws -> ProductSyncResult {
        let id = product.productIdentifier, version = entry.contentVersion
        var result = ProductSyncResult(productIdentifier: id, contentVersion: version.description)
        // Size limits and the package's URL, judged as for the catalog's latest version.
        var plan = SyncPlan.make(SyncSituation(productIdentifier: id, requested: true,
                                               product: CatalogProduct(productIdentifier: id, latest: version, versions: [entry]),
                                               catalogURL: catalogURL, installedVersion: nil, installedFolder: nil,
                                               deltaAllowed: options.delta, limits: options.limits))
        guard case .update(var update) = plan else {
            result.status = .refused
            if case .refused(let diagnostic) = plan { result.diagnostics.append(diagnostic) }
            return result
        }
        let folder: ProductFolder
        let state: ProductState
        do {
            let documents = documents, cancellation = options.cancellation
            // Waiting for another process's lock blocks: off the cooperative threads.
            guard let opened = try await BlockingWork.run({
                try ProductFolder.open(documents: documents, identifier: id, create: true, cancellation: cancellation)
            }) else { throw InstallError.io(path: documents + "/" + id, "cannot create the product folder") }
            folder = opened
            state = try ProductState.read(folder, latest: entry)
        } catch let error as any DiagnosableError {
            result.status = SyncStatus(error)
            result.diagnostics.append(error.diagnostic)
            return result
        }
        result.previousVersion = state.installedVersion
        if let installed = state.installedVersion, let installedVersion = ContentVersion(installed), installedVersion >= version {
            let which = installedVersion == version ? "version \(installed) of \(id) is installed already"
                : "\(id) \(installed) is installed, newer than \(version)"
            result.status = .refused
            result.diagnostics.append(Diagnostic(.versionNotBumped, path: folder.path,
                                                 "\(which): nothing to adopt; the folder is not needed any more"))
            folder.removeIfCreatedAndEmpty()
            return result
        }
        update.previousVersion = state.installedVersion
        let copyName = ProductFolder.adoptionPrefix + version.description
        defer {
            try? folder.remove(copyName)
            folder.removeIfCreatedAndEmpty()
        }
        if options.delta, entry.tocSHA256 != nil {
            do {
                try folder.removeLeftovers()
                let freeSpace = options.freeSpace, cancellation = options.cancellation
                try await BlockingWork.run {
                    try adopted.copy(into: folder, name: copyName, room: { bytes in
                        try InsufficientSpace.check(bytes, at: folder.path, freeSpace: freeSpace, subject: "\(id) \(version)",
                                                    breakdown: "a copy of the folder adopted", untouched: "nothing was copied")
                    }, cancellation: cancellation)
                }
            } catch let error as any DiagnosableError {
                result.status = SyncStatus(error)
                result.diagnostics.append(error.diagnostic)
                result.insufficientSpace = error as? InsufficientSpace
                return result
            }
            update.method = .delta(from: copyName)
        } else {
            // Without a table of contents nothing vouches for a file short of the whole package.
            update.method = .full(resumingFrom: state.partialBytes, reason: options.delta ? .noTableOfContents : .noDelta)
        }
        plan = .update(update)
        let executor = SyncExecutor(client: SyncClient(catalogURL: catalogURL, documents: documents, transport: transport), options: options,
                                    server: ServerKnowledge(catalogURL: catalogURL), mode: .install, progress: progress)
        progress?.expect(plan, of: id)
        let installed = try await executor.run(plan, productIdentifier: id, folder: folder, state: state)
        progress?.ended(id, completed: installed.status == .installed)
        return installed
    }
}
