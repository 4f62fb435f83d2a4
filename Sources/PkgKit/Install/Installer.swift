import Foundation
import PkgKitSupport
import PkgKitDiagnostics
import PkgKitIdentity
import PkgKitFormat
import PkgKitChecking
import PkgKitReports

/// Installs content packages into a Documents folder, the way a device does:
/// `DIR/<IAPProductIdentifier>/<ContentVersion>/` holds the tree below `Contents/`, and
/// `DIR/<IAPProductIdentifier>/ContentInfo.plist` (a copy of the package's) names the current one.
///
/// Every write goes through directory descriptors (`openat`, `mkdirat`, `symlinkat`) with
/// `O_NOFOLLOW`/`O_EXCL`, so no write ever follows a link or leaves the product folder. A version
/// is staged in `.staging-<random>/`, flushed, renamed into place, and only then is the record
/// replaced (write, fsync, rename). Installs into one product folder are serialised by
/// `flock` on `DIR/<id>/.lock` (see `ProductFolder`).
///
/// "Same files" is decided by hashing the installed folder (sha1 of each file, link targets)
/// and comparing with the package's digests; no manifest is stored.
public struct Installer: Sendable {
    /// The Documents folder (`--documents`).
    public var documents: String

    /// The record's file name inside a product folder.
    public static let recordName = ProductFolder.recordName
    /// The lock file's name inside a product folder.
    public static let lockName = ProductFolder.lockName

    /// An installer for the folder `documents` (a file URL).
    public init(documents: URL) {
        self.documents = FileURLs.path(of: documents)
    }

    /// An installer for the folder at the path `documents`.
    public init(documents: String) {
        self.documents = documents
    }

    /// The Documents folder.
    public var documentsURL: URL { URL(fileURLWithPath: documents, isDirectory: true) }

    /// The folder of a product: `DIR/<id>`.
    public func productURL(_ productIdentifier: String) -> URL {
        documentsURL.appendingPathComponent(productIdentifier, isDirectory: true)
    }

    /// The folder of a product: `DIR/<id>`.
    public func productPath(_ productIdentifier: String) -> String {
        documents + "/" + productIdentifier
    }

    // MARK: - Queries

    /// The version the product's record names, or nil when nothing is installed.
    public func currentVersion(productIdentifier: String) throws -> String? {
        try ProductFolder.open(documents: documents, identifier: productIdentifier, create: false)?.recordVersion()
    }

    /// The installed version folders of a product, highest version first.
    public func listVersions(productIdentifier: String) throws -> [String] {
        try ProductFolder.open(documents: documents, identifier: productIdentifier, create: false)?.versionFolders() ?? []
    }

    /// Removes version folders, keeping the current one plus the newest `keep − 1` others.
    /// Returns the names removed.
    public func prune(productIdentifier: String, keep: Int) throws -> [String] {
        precondition(keep >= 1, "keep must be at least 1")
        guard let product = try ProductFolder.open(documents: documents, identifier: productIdentifier, create: false) else { return [] }
        return try product.prune(current: product.recordVersion(), keep: keep)
    }

    // MARK: - Install

    /// Validates the package at `packagePath` and installs it. An invalid package or a refused
    /// install returns a report with status `refused`, and leaves nothing behind.
    /// Throws `ReadError` when the package cannot be read, `InstallError` on any write failure,
    /// `OperationCancelled` when `options.cancellation` is set before the version is in place.
    ///
    /// The package is read twice at most: a first look judges every rule that does not need file
    /// data (names, types, links, declared sizes, the plist), so that most invalid packages are
    /// refused before anything is written; then one full pass verifies checksums and sizes and
    /// looks for executable code while writing into the staging folder, and the rules judge that
    /// pass again before the staged version is renamed into place (or the staging folder removed).
    /// The first look reads no file data: on a xar it costs only the table of contents.
    public func install(_ packagePath: String, options: InstallOptions = InstallOptions()) throws -> InstallReport {
        try install(.file(packagePath), into: nil, options: options)
    }

    /// Validates the package at the file URL `package` and installs it, as `install(_:options:)`
    /// does for a path.
    public func install(_ package: URL, options: InstallOptions = InstallOptions()) throws -> InstallReport {
        try install(FileURLs.path(of: package), options: options)
    }

    /// Installs from `source`. With `held`, the product folder is already open and locked (a sync
    /// holds it from before the download); otherwise it is opened, created if need be, locked and
    /// cleaned of leftovers here.
    package func install(_ source: PackageSource, into held: ProductFolder?, options: InstallOptions) throws -> InstallReport {
        // The first look's table of contents (or the one the source came with) serves the full
        // pass, when the file has not changed.
        var source = source
        if source.memo == nil { source.memo = XarTableMemo() }
        var context = RuleContext(purpose: .extract, limits: options.limits, expectedProductIdentifier: options.expectedProductIdentifier,
                                  expectedContentVersion: options.expectedContentVersion)
        context.expectationsFrom = options.expectationsFrom
        var (report, firstInfo) = try firstLook(source, context: context, options: options)
        guard let info = firstInfo, let version = ContentVersion(info.contentVersion) else { return report }
        let product: ProductFolder
        if let held {
            guard held.identifier == info.productIdentifier else { return report }
            product = held
        } else {
            guard let opened = try ProductFolder.open(documents: documents, identifier: info.productIdentifier, create: true,
                                                      cancellation: options.cancellation) else {
                throw InstallError.io(path: productPath(info.productIdentifier), "cannot create the product folder")
            }
            product = opened
            try product.removeLeftovers()
        }
        let currentText = product.recordVersion()
        report.previousVersion = currentText
        let current = currentText.flatMap(ContentVersion.init)
        func refuse(_ diagnostic: Diagnostic) -> InstallReport {
            report.diagnostics.append(diagnostic)
            if held == nil { product.removeIfCreatedAndEmpty() }
            return report
        }
        if let current, version < current, !options.allowDowngrade {
            return refuse(Diagnostic(.versionNotBumped, path: nil,
                words: "\(info.contentVersion) is lower than the installed version \(current): this would be a downgrade; bump ContentVersion\(hint: .allowDowngrade)"))
        }

        let existing = try product.folder(for: version)
        if let existing {
            // The same version is on disk: compare contents, reading the package (not writing).
            let full = try PackageCheck.run(source, context: context, cancellation: options.cancellation,
                                            supplied: options.reused.mapValues(\.supplied))
            report = InstallReport(full, previousVersion: currentText)
            guard full.isValid(), let expected = Self.installedDigests(full.facts) else { return report }
            if try InstalledTree.scan(product, version: existing, cache: StatCache.read(product, version: existing)).digests == expected {
                if current != version {
                    // Installed but not current (after a downgrade): it becomes current under the
                    // package's own name, so that the record (a copy of the package's) names it.
                    let name = try adoptName(existing, as: info.contentVersion, in: product, current: currentText)
                    try product.writeRecord(full.facts.contentInfoData ?? Data())
                    report.installedPath = product.path(name)
                    report.status = .installed
                } else {
                    report.installedPath = product.path(existing)
                    report.status = .unchanged
                }
                return try finish(report, product: product, options: options)
            }
            guard options.force else {
                return refuse(Diagnostic(.versionNotBumped, path: nil,
                    words: "version \(existing) is already installed with different files: bump ContentVersion\(hint: .force)"))
            }
        }

        if let freeSpace = options.freeSpace {
            // The declared sizes, which the full pass holds every file to.
            do {
                try InsufficientSpace.check(report.payloadBytes, at: product.path, freeSpace: freeSpace,
                                            subject: "\(info.productIdentifier) \(info.contentVersion)",
                                            breakdown: "unpacked", untouched: "nothing was installed")
            } catch {
                if held == nil { product.removeIfCreatedAndEmpty() }
                throw error
            }
        }

        // One full pass: verify and stage together, judge what was read, then rename into place.
        let staging = ProductFolder.stagingPrefix + randomSuffix()
        let written: PackageCheck
        var background: StagingLanes?
        do {
            // Files are written on other threads (one lane of folders per core) while this one
            // takes the verified data from the reader.
            let sink = try StagingLanes(product: product.descriptor, name: staging, productPath: product.path, reused: options.reused)
            sink.onFile = options.filesStaged
            background = sink
            // Digests are not needed here: the container's checksums are verified by reading.
            written = try PackageCheck.run(source, context: context, digests: false, sink: sink,
                                           cancellation: options.cancellation, supplied: options.reused.mapValues(\.supplied), progress: options.progress)
            try sink.drain()
            try sink.finish()
        } catch {
            // The writing threads must have stopped before their folder is removed.
            try? background?.drain()
            try? product.remove(staging)
            if held == nil { product.removeIfCreatedAndEmpty() }
            throw error
        }
        report = InstallReport(written, previousVersion: currentText)
        guard written.isValid(), written.contentInfo == info, let record = written.facts.contentInfoData else {
            try? product.remove(staging)
            if written.isValid() {
                report.diagnostics.append(Diagnostic(.unreadableArchive, path: nil,
                    "the package changed while it was being installed: nothing was installed; run extract again"))
            }
            if held == nil { product.removeIfCreatedAndEmpty() }
            return report
        }
        do {
            try options.beforeCommit?()
        } catch {
            try? product.remove(staging)
            if held == nil { product.removeIfCreatedAndEmpty() }
            throw error
        }
        options.backupExclusion.mark(product.path(staging), when: options.excludeFromBackup)
        do {
            if let existing, existing == info.contentVersion {
                try product.replace(existing, with: staging)
            } else {
                // A new version, or `--force` over the same version under another name (`1.0.0`
                // over `1.0`): the new folder takes the package's name, the record follows, and
                // only then does the old folder go, so the record always names a folder that exists.
                try product.rename(staging, to: info.contentVersion)
            }
            fsync(product.descriptor)
        } catch {
            try? product.remove(staging)
            throw error
        }
        try product.writeRecord(record)
        if let existing, existing != info.contentVersion { try product.retire(existing) }
        report.status = .installed
        report.installedPath = product.path(info.contentVersion)
        report = try finish(report, product: product, options: options)
        options.afterCommit?()
        // Last: removing a version that shared files with this one changed those files (their
        // link count, so their change time), and the cache must describe them as they are now.
        let now = options.statCacheTime?()
        StatCache.write(product, version: info.contentVersion, files: Self.cachedFiles(written.facts), now: now)
        // The chunk tables were read with the TOC: the next delta from this version, by
        // sync after an extract too, cuts no installed file to find its chunks.
        ChunkIndex.seed(product, version: info.contentVersion, tables: Self.chunkTables(written.facts), carried: options.carriedChunks, now: now)
        return report
    }

    /// What is known of the package before anything is written: its identifier and version, and
    /// the report that refuses it when a first look finds it invalid (nil info). With
    /// `judgesOnce` (a delta sync, whose header and TOC are its catalog entry's and whose few
    /// fetched bytes are all there is left to read) the catalog's identifier and version stand in
    /// (the rules hold the package's plist to exactly them), and the rules judge the package once,
    /// on the full pass, before anything goes into place.
    /// The first look's facts are let go before the full pass builds its own.
    private func firstLook(_ source: PackageSource, context: RuleContext, options: InstallOptions) throws -> (InstallReport, ContentInfo?) {
        if options.judgesOnce, let identifier = options.expectedProductIdentifier, let version = options.expectedContentVersion {
            let expected = ContentInfo(contentVersion: version, productIdentifier: identifier)
            return (InstallReport(expecting: expected), expected)
        }
        let look = try PackageCheck.run(source, context: context, depth: .headers, digests: false, cancellation: options.cancellation,
                                        supplied: options.reused.mapValues(\.supplied))
        return (InstallReport(look), look.isValid() ? look.contentInfo : nil)
    }

    /// Gives an installed, not current, version folder the package's spelling of its version, so
    /// that the record about to be written names it; returns the folder's name.
    private func adoptName(_ folder: String, as name: String, in product: ProductFolder, current: String?) throws -> String {
        guard folder != name, folder != current else { return folder }
        try product.rename(folder, to: name)
        return name
    }

    /// `--keep` after an install that leaves a current version.
    private func finish(_ report: InstallReport, product: ProductFolder, options: InstallOptions) throws -> InstallReport {
        var report = report
        if let keep = options.keep {
            report.removedVersions = try product.prune(current: product.recordVersion(), keep: keep)
        }
        return report
    }

    /// What a stat cache records of the files `facts` describes: each regular file below
    /// `Contents/` whose sha1 the reading verified, by its path in the version folder, in the
    /// package's order (read as the cache is written, never gathered).
    static func cachedFiles(_ facts: PackageFacts) -> some Sequence<StatCache.File> {
        facts.entries.lazy.compactMap { entry -> StatCache.File? in
            guard entry.kind == .file, let relative = entry.path.contentsRelative, let sha1 = entry.digest else { return nil }
            return (relative, sha1, entry.executable)
        }
    }

    /// The chunk tables of `facts`' files below `Contents/`, by their path in the version folder.
    static func chunkTables(_ facts: PackageFacts) -> [(path: String, table: ChunkTable)] {
        facts.chunkTables.compactMap { position, table in
            guard position < facts.entries.count, let relative = facts.entries[position].path.contentsRelative else { return nil }
            return (relative, table)
        }
    }

    /// What the installed folder must hold for `facts`: payload digests, hard links showing
    /// their target's data.
    static func installedDigests(_ facts: PackageFacts) -> [String: String]? {
        guard var expected = PayloadDigests.of(facts) else { return nil }
        for entry in facts.entries where entry.kind == .hardlink {
            if let relative = entry.path.contentsRelative, let target = entry.hardlinkTarget?.contentsRelative {
                expected[relative] = expected[target]
            }
        }
        return expected
    }
}
