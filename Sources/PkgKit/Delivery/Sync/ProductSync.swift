internal import CSyscalls
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One product's part of a sync: compare the installed record with the catalog's latest version,
/// fetch the package (a delta when it can, else whole and resumable), install it through the
/// installer with the product folder locked throughout, and clean up after itself.
struct ProductSync {
    var client: SyncClient
    var options: SyncClient.Options
    var catalog: FetchedCatalog
    var productIdentifier: String
    /// True when the product was asked for by name (`--product`), false in an update run.
    var requested: Bool
    var progress: (@Sendable (SyncProgress) -> Void)?

    /// The product's outcome; throws only `OperationCancelled` (or the task's cancellation).
    func run() async throws -> ProductSyncResult {
        var result = ProductSyncResult(productIdentifier: productIdentifier)
        let received = ByteCounter()
        do {
            try await sync(into: &result, received: received)
        } catch let error as TransportError {
            result.status = .failed
            result.diagnostics.append(error.diagnostic)
        } catch let error as DownloadError {
            result.status = error.isRefusal ? .refused : .failed
            result.diagnostics.append(error.diagnostic)
        } catch let error as InstallError {
            result.status = .failed
            result.diagnostics.append(Diagnostic(.ioError, path: nil, error.description))
        } catch let error as ReadError {
            // The local file failing to read may pass; a package that is not one will not.
            result.status = error.code == .unreadableInput ? .failed : .refused
            result.diagnostics.append(error.diagnostic)
        }
        result.bytesDownloaded = received.value
        return result
    }

    private func sync(into result: inout ProductSyncResult, received: ByteCounter) async throws {
        let id = productIdentifier
        guard let product = catalog.catalog.product(id) else {
            if requested {
                result.status = .refused
                result.diagnostics.append(Diagnostic(.unknownProduct, path: nil, "the catalog lists no product \(id): check the identifier, or publish it first"))
            } else {
                // Installed from elsewhere (another catalog, extract): an update run leaves it be.
                result.previousVersion = try ProductFolder.open(documents: client.documents, identifier: id, create: false)?.recordVersion()
                result.diagnostics.append(Diagnostic(.unknownProduct, path: nil,
                    "installed, but this catalog does not list it: left as it is", severity: .warning))
            }
            return
        }
        guard let latest = product.latestVersion, let url = latest.resolvedURL(relativeTo: catalog.url) else {
            result.status = .refused
            result.diagnostics.append(Diagnostic(.invalidCatalog, path: Catalog.fileName, "\(id)'s latest version has no usable URL"))
            return
        }
        let latestText = latest.contentVersion.description
        result.contentVersion = latestText
        var folder = try ProductFolder.open(documents: client.documents, identifier: id, create: false, cancellation: options.cancellation)
        let current = folder?.recordVersion()
        result.previousVersion = current
        if let folder, let current, let installed = ContentVersion(current), installed >= latest.contentVersion {
            result.status = .unchanged
            result.installedPath = folder.path(current)
            if installed > latest.contentVersion {
                result.diagnostics.append(Diagnostic(.versionNotBumped, path: nil,
                    "installed \(current) is newer than the catalog's latest \(latestText): left as it is (sync never downgrades)", severity: .warning))
            }
            return
        }
        guard latest.size <= options.limits.maxSize else {
            result.status = .refused
            result.diagnostics.append(Diagnostic(.sizeLimit, path: nil,
                "\(id) \(latestText) is \(latest.size) bytes, over the limit of \(options.limits.maxSize): nothing was downloaded (raise --max-size to accept it)"))
            return
        }
        if folder == nil {
            folder = try ProductFolder.open(documents: client.documents, identifier: id, create: true, cancellation: options.cancellation)
        }
        guard let folder else { throw InstallError.io(path: client.documents + "/" + id, "cannot create the product folder") }
        try folder.removeLeftovers()

        var installOptions = InstallOptions(expectedProductIdentifier: id, expectedContentVersion: latestText, limits: options.limits,
                                            keep: options.keep, progress: report(.installing), cancellation: options.cancellation)
        installOptions.expectationsFrom = .catalog
        let installer = Installer(documents: client.documents)
        let partName = ProductFolder.downloadName(latestText)
        let resuming = exists(folder.path(partName))

        if options.delta, !resuming, let current, let version = ContentVersion(current), let installedFolder = try folder.folder(for: version),
           latest.tocSHA256 != nil, latest.size > 2 * DeltaDownload.firstRequestBytes {
            let deltaName = ProductFolder.deltaPrefix + latestText + ".part"
            defer { try? folder.remove(deltaName) }
            let copy = try SparseCopy(folder: folder.descriptor, name: deltaName, path: folder.path(deltaName), size: latest.size)
            let download = DeltaDownload(url: url, entry: latest, transport: client.transport, retryPolicy: options.retryPolicy,
                                         transferPolicy: options.transferPolicy)
            let outcome = try await download.run(into: copy, product: folder, installedVersion: installedFolder,
                                                 received: received, progress: report(.downloading))
            switch outcome {
            case .ready(let plan):
                do {
                    let source = PackageSource.delta(copy.path, shownAs: url.absoluteString, name: url.lastPathComponent,
                                                     reused: plan.reused, reusedEntries: plan.reusedEntries)
                    let installed = try installer.install(source, into: folder, options: installOptions)
                    record(installed, delta: true, into: &result)
                    if result.delta { result.filesDownloaded = plan.fetchedFiles }
                    return
                } catch InstallError.packageChanged {
                    // An installed file changed under the plan: the whole package it is.
                }
            case .whole:
                let installed = try installer.install(.file(copy.path, shownAs: url.absoluteString, name: url.lastPathComponent),
                                                      into: folder, options: installOptions)
                record(installed, delta: false, into: &result)
                return
            case .rangesIgnored, .notApplicable:
                break
            }
        }

        let partPath = folder.path(partName)
        try noteEntry(latest, for: partName, in: folder)
        let download = ResumableDownload(url: url, partPath: partPath, expectedSize: latest.size, expectedSHA256: latest.sha256,
                                         retryPolicy: options.retryPolicy, transferPolicy: options.transferPolicy)
        let downloaded: ResumableDownload.Result
        do {
            downloaded = try await download.run(using: client.transport, progress: report(.downloading))
        } catch let error as DownloadError where error.isRefusal {
            // Not the catalog's bytes: nothing of them is kept (the download removed its `.part`).
            try? folder.remove(partName)
            try? folder.remove(partName + Self.entrySuffix)
            folder.removeIfCreatedAndEmpty()
            throw error
        }
        received.add(downloaded.bytesDownloaded)
        #if os(Linux)
        // FoundationNetworking's receive buffers, freed by now, stay resident in the arenas of
        // its threads; the install would come on top of them. (Measured at 036f59c, before the
        // delegate queue was bounded: 70 MiB instead of 57 for 234 MB.)
        _ = CSyscalls_releaseFreeMemory()
        #endif
        let installed = try installer.install(.file(partPath, shownAs: url.absoluteString, name: url.lastPathComponent),
                                              into: folder, options: installOptions)
        // Installed, or refused by a rule: either way these bytes are done with.
        try? folder.remove(partName)
        try? folder.remove(partName + Self.entrySuffix)
        if installed.status == .refused { folder.removeIfCreatedAndEmpty() }
        record(installed, delta: false, into: &result)
    }

    /// What the `.part` is a download of, beside it: a download is resumed only for the same entry.
    static let entrySuffix = ".entry"

    /// Keeps the `.part` only when it was started for this very entry (same size and sha256);
    /// otherwise it goes, and the note is written for the download about to start.
    private func noteEntry(_ entry: CatalogVersion, for partName: String, in folder: ProductFolder) throws {
        let note = Data("\(entry.sha256.lowercased()) \(entry.size)\n".utf8)
        let notePath = folder.path(partName + Self.entrySuffix)
        if FileManager.default.contents(atPath: notePath) != note {
            try? folder.remove(partName)
            do {
                try note.write(to: URL(fileURLWithPath: notePath))
            } catch {
                throw InstallError.io(path: notePath, "cannot write: \(error.localizedDescription)")
            }
        }
    }

    /// The installer's report as this product's result.
    private func record(_ report: InstallReport, delta: Bool, into result: inout ProductSyncResult) {
        result.status = report.status == .refused ? .refused : .installed
        result.delta = delta && report.status != .refused
        result.installedPath = report.installedPath
        result.diagnostics += report.diagnostics
    }

    /// A progress callback for `phase` of this product.
    private func report(_ phase: SyncProgress.Phase) -> (@Sendable (Int64, Int64) -> Void)? {
        guard let progress else { return nil }
        let id = productIdentifier
        return { done, total in progress(SyncProgress(productIdentifier: id, phase: phase, done: done, total: total)) }
    }

    private func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }
}
