import Crypto
import Foundation
import PkgKitSupport
import PkgKitFormat
import PkgKitChecking
import PkgKitReports
import PkgKitInstall
import PkgKitCatalog
import PkgKitTransport
import PkgKitIdentity

/// What a device that has one package installed downloads to get another (`diff`'s
/// `downloadBytes`): the figure `sync --check` gives, found the way it finds it. The old package
/// is installed into a scratch Documents folder, the new one stands as its own catalog entry
/// (size, sha256, `tocSHA256`), and a check plans the update against the installed version:
/// header and TOC plus the changed files' stored bytes or changed chunks for a delta, the whole
/// package when a sync would download it whole (a zip, a package too small for a delta).
///
/// The planning is the sync's own (`SyncPlan`, `SyncExecutor` in check mode, `DeltaPlan`), which
/// lives in this layer: it needs the delta download and chunk assembly, and Operations, where
/// `diff`'s comparison is, sits below it. So the comparison reports the files, and this layer
/// adds the download to its report (`DiffReport.addingDownload`).
enum UpdateDownload {
    /// The bytes a sync from `old` (installed) to `new` downloads; nil when there is no such
    /// update to make: `new` is not a package file, or not a newer version of `old`'s product.
    package static func bytes(from old: String, to new: String, limits: PackageLimits,
                              cancellation: Cancellation?) async throws -> Int64? {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: new, isDirectory: &isFolder), !isFolder.boolValue else { return nil }
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        var install = InstallOptions(limits: limits, cancellation: cancellation)
        // Counting the download, not doing it: the scratch copy needs no room of its own.
        install.freeSpace = nil
        let installed = try Installer(documents: scratch.path).install(old, options: install)
        guard installed.status == .installed, let id = installed.productIdentifier, let oldVersion = installed.contentVersion,
              let folder = try ProductFolder.open(documents: scratch.path, identifier: id, create: false, locking: false),
              let entry = try entry(for: new, limits: limits, cancellation: cancellation) else { return nil }
        let packageURL = URL(fileURLWithPath: new)
        var state = ProductState()
        state.installedVersion = oldVersion
        state.installedFolder = try ContentVersion(oldVersion).flatMap { try folder.folder(for: $0) }
        let product = CatalogProduct(productIdentifier: id, latest: entry.contentVersion, versions: [entry])
        let plan = SyncPlan.make(SyncSituation(productIdentifier: id, requested: true, product: product, catalogURL: packageURL,
                                               installedVersion: state.installedVersion, installedFolder: state.installedFolder,
                                               limits: limits))
        guard case .update = plan else { return nil }
        // No catalog is fetched: the entry is made here from the package itself.
        var options = SyncClient.Options(products: [id], trust: .unsigned, limits: limits, cancellation: cancellation)
        options.freeSpace = FreeSpace { _ in nil }
        let executor = SyncExecutor(client: SyncClient(catalogURL: packageURL, documents: scratch.path), options: options,
                                    server: ServerKnowledge(catalogURL: packageURL), mode: .check, progress: nil)
        let result = try await executor.run(plan, productIdentifier: id, folder: folder, state: state)
        return result.status == .update ? result.bytesToDownload : nil
    }

    /// The catalog entry `publish` would write for the package at `path` (its name as the URL,
    /// relative to itself); nil when its ContentInfo.plist does not give a usable version.
    private static func entry(for path: String, limits: PackageLimits, cancellation: Cancellation?) throws -> CatalogVersion? {
        let look = try PackageCheck.run(.file(path), context: RuleContext(purpose: .validate, limits: limits), depth: .headers,
                                        digests: false, cancellation: cancellation)
        guard let info = look.contentInfo, let version = ContentVersion(info.contentVersion),
              let name = URL(fileURLWithPath: path).lastPathComponent.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed),
              let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        // The whole package's sha256, and for a xar that of its header and TOC, in one pass.
        var whole = SHA256(), toc = SHA256()
        var tocEnd: Int64?
        var offset: Int64 = 0
        while true {
            try cancellation?.check()
            let chunk = try handle.read(upToCount: 1 << 20) ?? Data()
            if chunk.isEmpty { break }
            if offset == 0, chunk.count >= XarHeader.size, let header = XarHeader(Array(chunk.prefix(XarHeader.size))) {
                tocEnd = header.heapStart
            }
            whole.update(data: chunk)
            if let tocEnd, offset < tocEnd { toc.update(data: chunk.prefix(Int(min(Int64(chunk.count), tocEnd - offset)))) }
            offset += Int64(chunk.count)
        }
        let tocSHA256 = tocEnd.map { $0 <= offset ? toc.finalize().hexString : nil } ?? nil
        return CatalogVersion(contentVersion: version, url: name, size: offset, sha256: whole.finalize().hexString, tocSHA256: tocSHA256,
                              fileCount: look.facts.fileCount, payloadBytes: look.facts.payloadBytes)
    }
}

extension DiffReport {
    /// This report with `downloadBytes`: what a device that has the old package installed
    /// downloads to get the new one, as `sync --check` counts it (`UpdateDownload`). Left nil
    /// when the verdict is not an update of one product to a newer version, or the new side is
    /// a folder (nothing to download).
    public func addingDownload(limits: PackageLimits = PackageLimits(), cancellation: Cancellation? = nil) async throws -> DiffReport {
        guard verdict == .ok || verdict == .contentUnchanged else { return self }
        var report = self
        do {
            report.downloadBytes = try await UpdateDownload.bytes(from: old.path, to: new.path, limits: limits, cancellation: cancellation)
        } catch let cancelled as OperationCancelled {
            throw cancelled
        } catch is CancellationError {
            throw OperationCancelled()
        } catch {
            // Both packages were read whole and are valid; a scratch copy that cannot be made
            // (no room in the temporary folder) leaves the figure unknown, not the diff failed.
            report.downloadBytes = nil
        }
        return report
    }
}
