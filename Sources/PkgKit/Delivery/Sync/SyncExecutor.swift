internal import CSyscalls
import Foundation
import PkgKitSupport
import PkgKitDiagnostics
import PkgKitIdentity
import PkgKitFormat
import PkgKitReports
import PkgKitInstall
import PkgKitTransport
import PkgKitCatalog
import PkgKitChecking

/// Carries out one product's `SyncPlan`: fetches the package (a delta when planned, else whole
/// and resumable), installs it through the installer with the product folder locked throughout
/// (same layout, record, lock and atomicity as `extract`), and cleans up after itself. It decides
/// nothing the plan has not: when the server turns out to ignore Range, the delta it was given
/// becomes the one plain download that the server's answer already is.
///
/// A check goes the same way and stops before the package's body: a delta's header and TOC are
/// fetched (into a scratch folder, not Documents) and planned against the installed version as a
/// sync plans them, and the ranges the sync would fetch are counted instead.
struct SyncExecutor {
    package var client: SyncClient
    package var options: SyncClient.Options
    /// What this run has learnt of the server, shared by every product.
    package var server: ServerKnowledge
    /// Install, or only say what an install would fetch (writing nothing).
    package var mode: SyncMode
    /// The run's progress, when someone is told of it.
    package var progress: RunProgress?

    /// The outcome of `plan` for the product in `folder` (locked for an install; nil when there is
    /// none yet), whose state the plan was made from. Throws only `OperationCancelled`; every other
    /// failure is a value in the result.
    package func run(_ plan: SyncPlan, productIdentifier id: String, folder: ProductFolder?, state: ProductState) async throws -> ProductSyncResult {
        var result = ProductSyncResult(productIdentifier: id, previousVersion: state.installedVersion, contentVersion: plan.contentVersion)
        let received = ByteCounter()
        do {
            switch plan {
            case .unchanged(let installed, let latest):
                result.status = .unchanged
                if let folder, let name = state.installedFolder { result.installedPath = folder.path(name) }
                if let installedVersion = ContentVersion(installed), let latestVersion = ContentVersion(latest), installedVersion > latestVersion {
                    let left = mode == .check ? "a sync leaves it as it is" : "left as it is (sync never downgrades)"
                    result.diagnostics.append(Diagnostic(.installedNewer, path: nil,
                        "installed \(installed) is newer than the catalog's latest \(latest): \(left)"))
                }
                if mode == .install, let keep = options.keep, let folder {
                    result.removedVersions = try folder.prune(current: folder.recordVersion(), keep: keep)
                }
            case .notListed:
                // Installed from elsewhere (another catalog, extract): an update run leaves it be.
                result.status = .unchanged
                result.listed = false
                if let folder, let name = state.installedFolder { result.installedPath = folder.path(name) }
            case .refused(let diagnostic):
                result.status = .refused
                result.diagnostics.append(diagnostic)
            case .update(let update):
                switch mode {
                case .install: try await install(update, productIdentifier: id, into: folder, received: received, result: &result)
                case .check: try await check(update, of: id, in: folder, received: received, result: &result)
                }
            }
        } catch let error as OperationCancelled {
            throw error
        } catch is CancellationError {
            throw OperationCancelled()
        } catch let error as any DiagnosableError {
            result.status = SyncStatus(error)
            result.diagnostics.append(error.diagnostic)
            result.transportFailure = error as? TransportError
            result.insufficientSpace = error as? InsufficientSpace
        }
        result.bytesDownloaded = received.value
        return result
    }

    // MARK: - Updates

    private func install(_ update: SyncPlan.Update, productIdentifier id: String, into existing: ProductFolder?,
                         received: ByteCounter, result: inout ProductSyncResult) async throws {
        let opened = try existing ?? ProductFolder.open(documents: client.documents, identifier: id, create: true,
                                                       cancellation: options.cancellation)
        guard let folder = opened else { throw InstallError.io(path: client.documents + "/" + id, "cannot create the product folder") }
        // A delta from a copy of adopted content (`SyncClient.adopt`) needs that copy still.
        var reusedFrom: String?
        if case .delta(let from) = update.method { reusedFrom = from }
        try folder.removeLeftovers(keeping: reusedFrom)
        var installOptions = InstallOptions(expectedProductIdentifier: id, expectedContentVersion: update.entry.contentVersion.description,
                                            limits: options.limits, keep: options.keep, cancellation: options.cancellation)
        installOptions.expectationsFrom = .catalog
        installOptions.statCacheTime = options.statCacheTime
        installOptions.excludeFromBackup = options.excludeFromBackup
        installOptions.backupExclusion = options.backupExclusion
        // The room was asked before the download, for the download and the unpacked files together.
        installOptions.freeSpace = nil
        if let progress {
            installOptions.progress = { done, total in progress.read(id, done, of: total) }
            installOptions.filesStaged = { files in progress.staged(id, files) }
        }
        if case .delta(let from) = update.method {
            let outcome = try await delta(update, from: from, folder: folder, options: installOptions, received: received)
            switch outcome {
            case .installed(let report, let files):
                record(report, delta: true, into: &result)
                result.filesDownloaded = files
                return
            case .installedWhole(let report):
                result.fullDownloadReason = .serverIgnoresRange
                record(report, delta: false, into: &result)
                return
            case .fallBack(let reason):
                result.fullDownloadReason = reason
            }
        } else if case .full(let resumingFrom, let reason) = update.method {
            result.fullDownloadReason = reason
            result.resumedFrom = resumingFrom > 0 ? resumingFrom : nil
        }
        var resumingFrom: Int64 = 0
        if case .full(let resumed, _) = update.method { resumingFrom = resumed }
        let report = try await whole(update, resumingFrom: resumingFrom, folder: folder, options: installOptions, received: received,
                                     result: &result)
        record(report, delta: false, into: &result)
    }

    /// What a sync of `update` would download, found as the sync finds it: a delta's header and
    /// TOC are fetched into a scratch folder and planned against the version installed in `folder`.
    private func check(_ update: SyncPlan.Update, of id: String, in folder: ProductFolder?, received: ByteCounter,
                       result: inout ProductSyncResult) async throws {
        result.status = .update
        result.bytesToDownload = update.entry.size
        let room = folder?.path ?? client.documents
        switch update.method {
        case .full(let resumingFrom, let reason):
            result.fullDownloadReason = reason
            // What the part file already holds is not downloaded again.
            result.bytesToDownload = update.entry.size - resumingFrom
            result.resumedFrom = resumingFrom > 0 ? resumingFrom : nil
            try checkRoom(for: update, of: id, download: result.bytesToDownload, unpacked: update.entry.payloadBytes, at: room, mode: .check)
        case .delta(let from):
            // A delta is planned only from an installed version, whose folder is there.
            guard let folder else { return }
            let scratch = try ScratchFolder()
            defer { scratch.remove() }
            let copy = try SparseCopy(folder: scratch.descriptor, name: ScratchFolder.copyName, path: scratch.path(ScratchFolder.copyName),
                                      size: update.entry.size)
            switch try await startDelta(update, from: from, folder: folder, into: copy, acceptWhole: false, received: received) {
            case .planned(let planned):
                result.delta = true
                result.bytesToDownload = planned.bytesToDownload
                try checkRoom(for: update, of: id, download: planned.bytesToDownload, unpacked: planned.unpacked(update.entry), at: room,
                              mode: .check)
            case .whole:
                result.fullDownloadReason = .serverIgnoresRange
                try checkRoom(for: update, of: id, download: update.entry.size, unpacked: update.entry.payloadBytes, at: room, mode: .check)
            case .fallBack(let reason):
                result.fullDownloadReason = reason
                try checkRoom(for: update, of: id, download: update.entry.size, unpacked: update.entry.payloadBytes, at: room, mode: .check)
            }
        }
    }

    /// How a delta attempt ended.
    private enum DeltaOutcome {
        /// Installed from the fetched ranges and the installed files; `files` were downloaded.
        case installed(InstallReport, files: Int)
        /// The server answered the first Range request with the whole package, now installed.
        case installedWhole(InstallReport)
        /// A delta does not apply after all: download the package whole.
        case fallBack(SyncPlan.FullDownloadReason?)
    }

    /// What a delta's first step found, the same for a sync and a check.
    private enum DeltaStart {
        /// A delta applies: the header and TOC are in the copy, and `planned` says what else to fetch.
        case planned(PlannedDelta)
        /// The server answered the Range request with the whole package (in the copy when the
        /// caller accepted it).
        case whole
        /// A delta does not apply after all: the package is downloaded whole.
        case fallBack(SyncPlan.FullDownloadReason?)
    }

    /// A delta planned against the installed version.
    private struct PlannedDelta {
        var plan: DeltaPlan
        /// The new package's regular files, and the installed version's chunk index (when a
        /// changed file has a chunk table): what the new version's index is made from.
        var files: [DeltaPlan.WantedFile]
        var index: ChunkIndex?
        var download: DeltaDownload
        /// The ranges still to fetch: the changed files' (or chunks') data.
        var ranges: [Range<Int64>]
        /// Bytes `0 ..< fetched` (header and TOC) are in the copy already.
        var fetched: Int64
        var memo: XarTableMemo

        /// Everything the delta downloads, the first step's bytes included.
        var bytesToDownload: Int64 { ranges.reduce(fetched) { $0 + Int64($1.count) } }

        /// The bytes of the new version's files that are not taken from the installed ones: what
        /// its install writes anew.
        func unpacked(_ entry: CatalogVersion) -> Int64 {
            max(0, plan.reused.values.reduce(entry.payloadBytes) { $0 - $1.identity.size })
        }
    }

    /// A delta's first step: the header and TOC fetched into `copy` and checked, the installed
    /// version read (from its stat cache, or hashed on every core) meanwhile, and the changed
    /// files planned. With `acceptWhole`, a server that ignores Range leaves the whole package in
    /// the copy; without, its transfer is dropped at once.
    private func startDelta(_ update: SyncPlan.Update, from version: String, folder: ProductFolder, into copy: SparseCopy,
                            acceptWhole: Bool, received: ByteCounter) async throws -> DeltaStart {
        var download = DeltaDownload(url: update.url, entry: update.entry, transport: client.transport,
                                     retryPolicy: options.retryPolicy, transferPolicy: options.transferPolicy)
        download.retryBudget = server.retryBudget
        // Large files the stat cache does not vouch for are hashed later, in the read that cuts
        // them into chunks once the TOC says how: each is read once.
        async let scanned = BlockingWork.run {
            try InstalledTree.scan(folder, version: version, cache: StatCache.read(folder, version: version),
                                   hashing: { $0 < ChunkParameters.smallestChunkedFile })
        }
        switch try await download.fetchTableOfContents(into: copy, acceptWhole: acceptWhole, received: received, limits: options.limits,
                                                        progress: downloading(folder.identifier, counted: received)) {
        case .whole:
            server.honoursRange = false
            return .whole
        case .notApplicable:
            return .fallBack(.noTableOfContents)
        case .ready(let toc, let files, let fetched, let memo):
            server.honoursRange = true
            let scannedTree = try await scanned
            // A changed file with a chunk table takes its chunks from whichever installed files
            // hold them: only the chunks none holds are fetched. A sync keeps the index for the
            // next one; a check writes nothing.
            let cancellation = options.cancellation, keeps = mode == .install, now = options.statCacheTime
            let (installed, index) = try await BlockingWork.run {
                var tree = scannedTree
                let index = try DeltaPlan.chunkIndex(files, installed: &tree, folder: folder, cancellation: cancellation)
                if keeps { index?.writeIfChanged(folder, now: now?()) }
                return (tree, index)
            }
            options.filesCut?(index?.filesRead ?? 0)
            let plan: DeltaPlan
            do {
                plan = try DeltaPlan.make(wanted: files, heapStart: toc.heapStart, packageSize: update.entry.size,
                                          installed: installed, chunks: index)
            } catch {
                return .fallBack(error.reason)
            }
            return .planned(PlannedDelta(plan: plan, files: files, index: index, download: download,
                                         ranges: download.ranges(for: plan, toc: toc, fetched: fetched), fetched: fetched, memo: memo))
        }
    }

    /// A delta update from the installed `version`: its first step, the planned ranges into a
    /// copy in the product folder, then the install from the copy and the installed files.
    private func delta(_ update: SyncPlan.Update, from version: String, folder: ProductFolder, options installOptions: InstallOptions,
                       received: ByteCounter) async throws -> DeltaOutcome {
        let name = ProductFolder.deltaPrefix + update.entry.contentVersion.description + ".part"
        defer { try? folder.remove(name) }
        let copy = try SparseCopy(folder: folder.descriptor, name: name, path: folder.path(name), size: update.entry.size)
        let shown = update.url.absoluteString, fileName = update.url.lastPathComponent
        let installer = Installer(documents: client.documents)
        let planned: PlannedDelta
        switch try await startDelta(update, from: version, folder: folder, into: copy, acceptWhole: true, received: received) {
        case .whole:
            let report = try await BlockingWork.run {
                try installer.install(.file(copy.path, shownAs: shown, name: fileName), into: folder, options: installOptions)
            }
            return .installedWhole(report)
        case .fallBack(let reason):
            return .fallBack(reason)
        case .planned(let started):
            planned = started
        }
        progress?.plannedDownload(folder.identifier, total: planned.bytesToDownload)
        // The header and TOC are here; nothing more is fetched without room for it.
        try checkRoom(for: update, of: folder.identifier, download: planned.bytesToDownload - planned.fetched, unpacked: planned.unpacked(update.entry),
                      at: folder.path, mode: .install)
        var plan = planned.plan
        do {
            try await planned.download.fetchRanges(planned.ranges, into: copy, received: received,
                                                   progress: downloading(folder.identifier, counted: received))
        } catch is DeltaDownload.RangesIgnored {
            server.honoursRange = false
            return .fallBack(.serverIgnoresRange)
        }
        let chunksName = ProductFolder.deltaPrefix + update.entry.contentVersion.description + ".chunks"
        defer { try? folder.remove(chunksName) }
        if !plan.assembled.isEmpty {
            // Copied chunks an installed file no longer holds (it changed within a clock tick of
            // being cut, so its identity did not show it) are fetched instead, once; the index
            // that vouched for them is dropped, to be cut again next time.
            var assembled = plan.assembled, refetched = false
            while true {
                let attempt = assembled
                do {
                    let rebuilt = try await BlockingWork.run {
                        try ChunkAssembly.assembleAll(attempt, from: copy, folder: folder, scratchName: chunksName, url: shown,
                                                      cancellation: installOptions.cancellation)
                    }
                    plan.reused.merge(rebuilt) { _, rebuilt in rebuilt }
                    break
                } catch let stale as StaleChunks where !refetched {
                    ChunkIndex.beside.remove(folder, version: version)
                    refetched = true
                    var ranges: [Range<Int64>] = []
                    for index in assembled.indices {
                        if let chunks = stale.chunks[assembled[index].order] { ranges += assembled[index].fetchInstead(chunks) }
                    }
                    let merged = DeltaPlan.merge(ranges)
                    guard merged.count <= DeltaPlan.maxRanges else { return .fallBack(nil) }
                    do {
                        try await planned.download.fetchRanges(merged, into: copy, received: received,
                                                               progress: downloading(folder.identifier, counted: received))
                    } catch is DeltaDownload.RangesIgnored {
                        server.honoursRange = false
                        return .fallBack(.serverIgnoresRange)
                    }
                } catch is StaleChunks {
                    return .fallBack(nil)
                } catch InstallError.packageChanged {
                    ChunkIndex.beside.remove(folder, version: version)
                    return .fallBack(nil)
                }
            }
        }
        let source = PackageSource.delta(copy.path, shownAs: shown, name: fileName, reusedEntries: plan.reusedEntries,
                                         memo: planned.memo)
        var deltaOptions = installOptions
        deltaOptions.judgesOnce = true
        deltaOptions.reused = plan.reused
        // The rebuilt files' scratch links go before the new version's files are recorded.
        deltaOptions.afterCommit = { try? folder.remove(chunksName) }
        if let previous = planned.index {
            // Files the update reused hold the bytes they held: their chunks carry over.
            deltaOptions.carriedChunks = ChunkIndex.Carried(files: plan.reused.compactMap { path, file in
                file.version == version ? path.contentsRelative.map { (path: $0, from: file.relativePath) } : nil
            }, previous: previous)
        }
        do {
            let report = try await BlockingWork.run { [deltaOptions] in try installer.install(source, into: folder, options: deltaOptions) }
            return .installed(report, files: plan.fetchedFiles)
        } catch InstallError.packageChanged {
            // An installed file changed under the plan: the whole package it is.
            return .fallBack(nil)
        }
    }

    /// A whole download, into the `.part` (resumed when an earlier run left one). A xar is
    /// installed while it arrives (`streamed`); anything else once it is complete.
    private func whole(_ update: SyncPlan.Update, resumingFrom: Int64, folder: ProductFolder, options installOptions: InstallOptions,
                       received: ByteCounter, result: inout ProductSyncResult) async throws -> InstallReport {
        let entry = update.entry
        // The `.part` and the staged version are both on the disk until the version is in place.
        do {
            try checkRoom(for: update, of: folder.identifier, download: entry.size - resumingFrom, unpacked: entry.payloadBytes, at: folder.path, mode: .install)
        } catch {
            folder.removeIfCreatedAndEmpty()
            throw error
        }
        try DownloadNote.claim(entry, in: folder)
        // After a delta that fell back, the whole package it is.
        progress?.plannedDownload(folder.identifier, total: entry.size)
        let partPath = folder.path(DownloadNote.partName(entry))
        let shown = update.url.absoluteString, name = update.url.lastPathComponent
        let outcome: WholeDownload
        do {
            let part = try PartFile(path: partPath, size: entry.size, sha256: entry.sha256, tocSHA256: entry.tocSHA256, url: shown)
            options.backupExclusion.mark(partPath, when: options.excludeFromBackup)
            // Both the download and the install from it have ended when `streamed` returns.
            defer { part.closeFile() }
            outcome = try await streamed(update, into: part, folder: folder, options: installOptions)
        } catch let error as DownloadError where error.disposition == .refused {
            // Not the catalog's bytes: nothing of them is kept.
            DownloadNote.discard(entry, in: folder)
            folder.removeIfCreatedAndEmpty()
            throw error
        }
        received.add(outcome.downloaded.bytesDownloaded)
        result.resumedFrom = outcome.downloaded.resumedFrom > 0 ? outcome.downloaded.resumedFrom : nil
        let report: InstallReport
        if let streamedReport = outcome.report {
            report = streamedReport
        } else {
            #if os(Linux)
            // The download's buffers, freed by now, stay resident in the allocator's arenas; the
            // install would come on top of them.
            _ = CSyscalls_releaseFreeMemory()
            #endif
            let source = PackageSource.file(partPath, shownAs: shown, name: name)
            report = try await BlockingWork.run { try Installer(documents: client.documents).install(source, into: folder, options: installOptions) }
        }
        // Installed, or refused by a rule: either way these bytes are done with.
        DownloadNote.discard(entry, in: folder)
        if report.status == .refused { folder.removeIfCreatedAndEmpty() }
        return report
    }

    /// What a whole download ended with: the download's account, and the install's report when
    /// the package was installed as it arrived (nil: install it now, from the complete file).
    private struct WholeDownload {
        var downloaded: ResumableDownload.Result
        var report: InstallReport?
    }

    /// One task downloads into `part` while another installs from it, reading each byte as soon
    /// as it is written: the version is decoded, verified (each file against the TOC, the TOC
    /// against the catalog's `tocSHA256`) and staged during the download, and goes into place
    /// only once the whole package's sha256 matched (the installer waits for that before its
    /// commit). A failed download fails the installer's reads; a failed install cancels the
    /// download (which keeps its `.part`). A package refused by a rule is still downloaded to its
    /// end, so that a package that is not its catalog entry is refused as that. A package only libarchive reads (or with
    /// no `tocSHA256`: not a xar) is not installed here; the caller installs it once it is whole.
    private func streamed(_ update: SyncPlan.Update, into part: PartFile, folder: ProductFolder,
                          options installOptions: InstallOptions) async throws -> WholeDownload {
        let entry = update.entry, id = folder.identifier
        let download = ResumableDownload(url: update.url, partPath: part.path, expectedSize: entry.size, expectedSHA256: entry.sha256,
                                         retryPolicy: options.retryPolicy, transferPolicy: options.transferPolicy)
        let transport = client.transport, downloading = downloading(id)
        guard entry.tocSHA256 != nil else {
            let downloaded = try await download.run(into: part, using: transport, progress: downloading)
            try part.finish()
            return WholeDownload(downloaded: downloaded, report: nil)
        }
        var streaming = installOptions
        // The install reads no more before its commit: the download must not wait for it.
        streaming.beforeCommit = {
            part.stopPacing()
            try part.waitUntilVerified()
        }
        part.pace()
        let installer = Installer(documents: client.documents), gated = streaming
        let source = PackageSource.arriving(part, shownAs: update.url.absoluteString, name: update.url.lastPathComponent)
        return try await withThrowingTaskGroup(of: StreamStep.self) { group in
            group.addTask {
                do {
                    let downloaded = try await download.run(into: part, using: transport, progress: downloading)
                    try part.finish()
                    return .downloaded(downloaded)
                } catch {
                    part.fail(error)
                    throw StreamStep.Failure.download(error)
                }
            }
            group.addTask {
                // However the install ends, it reads no more.
                defer { part.stopPacing() }
                do {
                    return .installed(try await BlockingWork.run { try installer.install(source, into: folder, options: gated) })
                } catch {
                    throw StreamStep.Failure.install(error)
                }
            }
            var downloaded: ResumableDownload.Result?, installed: InstallReport?
            var downloadFailure: (any Error)?, installFailure: (any Error)?
            while let step = await group.nextResult() {
                switch step {
                case .success(.downloaded(let value)): downloaded = value
                case .success(.installed(let report)):
                    // Refused by a rule: the download still ends, so that bytes which are not the
                    // catalog's are said to be that (checksum-mismatch), not a rule they break.
                    installed = report
                case .failure(StreamStep.Failure.download(let error)): downloadFailure = error
                case .failure(StreamStep.Failure.install(let error)):
                    installFailure = error
                    if !(error is PackageOpener.NeedsWholeFile) { group.cancelAll() }
                case .failure(let error): throw error
                }
            }
            // The download's own failure explains the install's (its reads failed with it).
            if let downloadFailure { throw downloadFailure }
            if let installFailure, !(installFailure is PackageOpener.NeedsWholeFile) { throw installFailure }
            guard let downloaded else { throw CancellationError() }
            return WholeDownload(downloaded: downloaded, report: installed)
        }
    }

    /// What each side of a streamed install ends with.
    private enum StreamStep: Sendable {
        case downloaded(ResumableDownload.Result)
        case installed(InstallReport)

        /// Which side failed, with its error.
        enum Failure: Error {
            case download(any Error)
            case install(any Error)
        }
    }

    /// Throws `InsufficientSpace` when the file system holding `path` has no room for `download`
    /// more bytes of package and `unpacked` bytes of new files: a download never starts only to
    /// fill the disk.
    private func checkRoom(for update: SyncPlan.Update, of id: String, download: Int64, unpacked: Int64, at path: String, mode: SyncMode) throws {
        let words = download > 0
            ? "\(download == update.entry.size ? "a" : "another") \(ByteSize.human(download)) download, \(ByteSize.human(unpacked)) unpacked"
            : "\(ByteSize.human(unpacked)) unpacked"
        try InsufficientSpace.check(download + unpacked, at: path, freeSpace: options.freeSpace,
                                    subject: "\(id) \(update.entry.contentVersion)",
                                    breakdown: words, untouched: mode == .check ? "a sync would stop before downloading it" : "nothing was downloaded")
    }

    /// The installer's report as this product's result.
    private func record(_ report: InstallReport, delta: Bool, into result: inout ProductSyncResult) {
        result.status = report.status == .refused ? .refused : .installed
        result.delta = delta && report.status != .refused
        result.installedPath = report.installedPath
        result.removedVersions = report.removedVersions
        result.diagnostics += report.diagnostics
    }

    /// A download's progress callback for product `id`: the bytes it reports (a whole download's,
    /// resumed ones included), or with `counted`, every byte of the product's delta received so far.
    private func downloading(_ id: String, counted: ByteCounter? = nil) -> (@Sendable (Int64, Int64) -> Void)? {
        guard let progress else { return nil }
        if let counted { return { _, _ in progress.downloaded(id, counted.value) } }
        return { done, _ in progress.downloaded(id, done) }
    }
}

/// What a sync has learnt of the server as it went: whether it honours Range requests. A server
/// that answered one Range request with the whole file is not asked for a delta again this run.
/// And what it may still spend on it: the ranged requests of every delta of the run retry from
/// one allowance, so a server failing range after range of product after product earns no
/// fresh one for each.
final class ServerKnowledge: Sendable {
    private let ranges: LockedValue<Bool?>
    /// The attempts of every delta's ranged requests this run.
    let retryBudget = RetryBudget()

    /// Known for local files (they always do); learnt for a web server.
    package init(catalogURL: URL) {
        ranges = LockedValue(catalogURL.isFileURL ? true : nil)
    }

    /// nil until a Range request has been answered.
    var honoursRange: Bool? {
        get { ranges.current }
        set { ranges.withLock { $0 = newValue } }
    }
}
