internal import CSyscalls
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Crypto
import Foundation

/// Installs content packages into a Documents folder, the way a device does:
/// `DIR/<IAPProductIdentifier>/<ContentVersion>/` holds the tree below `Contents/`, and
/// `DIR/<IAPProductIdentifier>/ContentInfo.plist` (a copy of the package's) names the current one.
///
/// Every write goes through directory descriptors (`openat`, `mkdirat`, `symlinkat`) with
/// `O_NOFOLLOW`/`O_EXCL`, so no write ever follows a link or leaves the product folder. A version
/// is staged in `.staging-<random>/`, flushed, renamed into place, and only then is the record
/// replaced (write, fsync, rename). Installs into one product folder are serialised by
/// `flock` on `DIR/<id>/.lock`.
///
/// "Same files" is decided by hashing the installed folder (sha1 of each file, link targets)
/// and comparing with the package's digests; no manifest is stored.
public struct Installer: Sendable {
    /// The Documents folder (`--documents`).
    public var documents: String

    /// The record's file name inside a product folder.
    public static let recordName = ContentInfo.fileName
    /// The lock file's name inside a product folder.
    public static let lockName = ".lock"
    static let stagingPrefix = ".staging-"
    static let oldPrefix = ".old-"
    static let replacingPrefix = ".replacing-"

    public init(documents: String) {
        self.documents = documents
    }

    /// The folder of a product: `DIR/<id>`.
    public func productPath(_ productIdentifier: String) -> String {
        documents + "/" + productIdentifier
    }

    // MARK: - Queries

    /// The version the product's record names, or nil when nothing is installed.
    public func currentVersion(productIdentifier: String) throws -> String? {
        guard let product = try openProduct(productIdentifier, create: false)?.descriptor else { return nil }
        defer { close(product) }
        return readRecordVersion(product)
    }

    /// The installed version folders of a product, highest version first.
    public func listVersions(productIdentifier: String) throws -> [String] {
        guard let product = try openProduct(productIdentifier, create: false)?.descriptor else { return [] }
        defer { close(product) }
        return try versionFolders(product, path: productPath(productIdentifier))
    }

    /// Removes version folders, keeping the current one plus the newest `keep − 1` others.
    /// Returns the names removed.
    public func prune(productIdentifier: String, keep: Int) throws -> [String] {
        precondition(keep >= 1, "keep must be at least 1")
        guard let product = try openProduct(productIdentifier, create: false)?.descriptor else { return [] }
        defer { close(product) }
        let lock = try takeLock(product, path: productPath(productIdentifier))
        defer { close(lock) }
        return try prune(product, path: productPath(productIdentifier), current: readRecordVersion(product), keep: keep)
    }

    // MARK: - Install

    /// Validates the package at `packagePath` and installs it. An invalid package or a refused
    /// install returns a report with status `refused`, and leaves nothing behind.
    /// Throws `ReadError` when the package cannot be read, `InstallError` on any write failure.
    ///
    /// The package is read twice at most: a first look judges every rule that does not need file
    /// data (names, types, links, declared sizes, the plist), so that most invalid packages are
    /// refused before anything is written; then one full pass verifies checksums and sizes and
    /// looks for executable code while writing into the staging folder, and the rules judge that
    /// pass again before the staged version is renamed into place (or the staging folder removed).
    /// The first look reads no file data: on a xar it costs only the table of contents.
    public func install(_ packagePath: String, options: InstallOptions = InstallOptions()) throws -> InstallReport {
        let context = RuleContext(purpose: .extract, limits: options.limits,
                                  expectedProductIdentifier: options.expectedProductIdentifier)
        // The first look's facts are let go before the full pass builds its own.
        var (report, firstInfo) = try { () throws -> (InstallReport, ContentInfo?) in
            let firstLook = try PackageCheck.run(packagePath, context: context, depth: .headers, digests: false)
            return (InstallReport(firstLook), firstLook.isValid() ? firstLook.contentInfo : nil)
        }()
        guard let info = firstInfo, let version = ContentVersion(info.contentVersion) else {
            return report
        }
        let id = info.productIdentifier
        let productPath = productPath(id)
        try ensureDocuments()
        guard let (product, created) = try openProduct(id, create: true) else {
            throw InstallError.io(path: productPath, "cannot create the product folder")
        }
        defer { close(product) }
        let lock = try takeLock(product, path: productPath)
        defer { close(lock) }
        try removeLeftovers(product, path: productPath)

        let currentText = readRecordVersion(product)
        report.previousVersion = currentText
        let current = currentText.flatMap(ContentVersion.init)
        if let current, version < current, !options.allowDowngrade {
            report.diagnostics.append(Diagnostic(.versionNotBumped, path: nil,
                "\(info.contentVersion) is lower than the installed version \(current): this would be a downgrade; bump ContentVersion or pass --allow-downgrade"))
            return report
        }

        let existing = try versionFolders(product, path: productPath).first { ContentVersion($0) == version }
        let folderName = existing ?? info.contentVersion
        let installedPath = productPath + "/" + folderName
        if let existing {
            // The same version is on disk: compare contents, reading the package (not writing).
            let full = try PackageCheck.run(packagePath, context: context)
            report = InstallReport(full, previousVersion: currentText)
            guard full.isValid(), let expected = Self.installedDigests(full.facts) else { return report }
            if try digests(of: product, name: existing, path: installedPath) == expected {
                report.installedPath = installedPath
                if let current, current == version {
                    report.status = .unchanged
                } else {
                    try writeRecord(full.facts.contentInfoData ?? Data(), into: product, path: productPath)
                    report.status = .installed
                }
                if let keep = options.keep {
                    report.removedVersions = try prune(product, path: productPath, current: folderName, keep: keep)
                }
                return report
            }
            guard options.force else {
                report.diagnostics.append(Diagnostic(.versionNotBumped, path: nil,
                    "version \(existing) is already installed with different files: bump ContentVersion, or pass --force to replace it"))
                return report
            }
        }

        // One full pass: verify and stage together, judge what was read, then rename into place.
        let staging = Installer.stagingPrefix + randomSuffix()
        let written: PackageCheck
        var background: StagingLanes?
        do {
            // Files are written on other threads (one lane of folders per core) while this one
            // takes the verified data from the reader.
            let sink = try StagingLanes(product: product, name: staging, productPath: productPath)
            background = sink
            // Digests are not needed here: the container's checksums are verified by reading.
            written = try PackageCheck.run(packagePath, context: context, digests: false, sink: sink, progress: options.progress)
            try sink.drain()
            try sink.finish()
        } catch {
            // The writing threads must have stopped before their folder is removed.
            try? background?.drain()
            try? removeTree(product, name: staging)
            throw error
        }
        report = InstallReport(written, previousVersion: currentText)
        guard written.isValid(), written.contentInfo == info, let record = written.facts.contentInfoData else {
            try? removeTree(product, name: staging)
            if written.isValid() {
                report.status = .refused
                report.diagnostics.append(Diagnostic(.unreadableArchive, path: nil,
                    "the package changed while it was being installed: nothing was installed; run extract again"))
            }
            if created { removeEmptyProduct(id) }
            return report
        }
        do {
            if existing != nil {
                try replace(folderName, with: staging, in: product, path: productPath)
            } else {
                try check(renameat(product, staging, product, folderName), installedPath)
            }
            fsync(product)
        } catch {
            try? removeTree(product, name: staging)
            throw error
        }
        try writeRecord(record, into: product, path: productPath)
        report.status = .installed
        report.installedPath = installedPath
        if let keep = options.keep {
            report.removedVersions = try prune(product, path: productPath, current: folderName, keep: keep)
        }
        return report
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

    /// Removes a product folder this run created for a package that turned out invalid, when it
    /// holds nothing but the lock: an invalid package leaves nothing behind.
    private func removeEmptyProduct(_ id: String) {
        let folder = productPath(id)
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder), names == [Installer.lockName] else { return }
        unlink(folder + "/" + Installer.lockName)
        rmdir(folder)
    }

    /// Puts the staged folder in the place of an installed version. On Linux the two swap in one
    /// atomic step (`renameat2(RENAME_EXCHANGE)`), so the version folder never goes missing;
    /// elsewhere two renames, and a run killed between them is repaired by the next one.
    func replace(_ folderName: String, with staging: String, in product: Int32, path productPath: String) throws {
        #if os(Linux)
        if CSyscalls_exchange(product, staging, product, folderName) == 0 {
            try? removeTree(product, name: staging)
            return
        }
        guard errno == EINVAL || errno == ENOSYS else {
            throw InstallError.io(path: productPath + "/" + folderName, errnoText())
        }
        #endif
        let old = Installer.replacingPrefix + randomSuffix()
        try check(renameat(product, folderName, product, old), productPath + "/" + folderName)
        if renameat(product, staging, product, folderName) != 0 {
            let message = errnoText()
            renameat(product, old, product, folderName)
            throw InstallError.io(path: productPath + "/" + folderName, message)
        }
        try? removeTree(product, name: old)
    }

    // MARK: - Folders and records

    func ensureDocuments() throws {
        var info = stat()
        if stat(documents, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFDIR else {
                throw InstallError.io(path: documents, "not a folder")
            }
            return
        }
        guard mkdir(documents, 0o755) == 0 || errno == EEXIST else {
            throw InstallError.io(path: documents, "cannot create the Documents folder: \(errnoText())")
        }
    }

    /// Opens `DIR/<id>` without following a link; creates it when asked (and says whether it
    /// did). nil when absent.
    func openProduct(_ id: String, create: Bool) throws -> (descriptor: Int32, created: Bool)? {
        guard ProductIdentifier.problem(with: id) == nil else {
            throw InstallError.unsafeDestination(path: productPath(id), "not a valid IAPProductIdentifier")
        }
        let docs = open(documents, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard docs >= 0 else {
            if errno == ENOENT && !create { return nil }
            throw InstallError.io(path: documents, errnoText())
        }
        defer { close(docs) }
        var created = false
        if create {
            if mkdirat(docs, id, 0o755) == 0 {
                created = true
            } else if errno != EEXIST {
                throw InstallError.io(path: productPath(id), "cannot create the product folder: \(errnoText())")
            }
        }
        let fd = openat(docs, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        if fd < 0 {
            let code = errno
            if code == ENOENT && !create { return nil }
            var info = stat()
            if fstatat(docs, id, &info, AT_SYMLINK_NOFOLLOW) == 0, info.st_mode & S_IFMT == S_IFLNK {
                throw InstallError.unsafeDestination(path: productPath(id), "is a symbolic link: refusing to install through it")
            }
            throw InstallError.io(path: productPath(id), String(cString: strerror(code)))
        }
        return (fd, created)
    }

    func takeLock(_ product: Int32, path: String) throws -> Int32 {
        let fd = openat(product, Installer.lockName, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw InstallError.io(path: path + "/" + Installer.lockName, "cannot open the lock file: \(errnoText())") }
        while flock(fd, LOCK_EX) != 0 {
            if errno == EINTR { continue }
            let message = errnoText()
            close(fd)
            throw InstallError.io(path: path + "/" + Installer.lockName, "cannot lock: \(message)")
        }
        return fd
    }

    /// The ContentVersion named by the record, or nil.
    func readRecordVersion(_ product: Int32) -> String? {
        let fd = openat(product, Installer.recordName, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while data.count <= PackageLimits.maxContentInfoBytes {
            let count = read(fd, &buffer, buffer.count)
            if count <= 0 { break }
            data.append(contentsOf: buffer[0..<count])
        }
        return ParsedContentInfo(data: data).contentVersion
    }

    /// Replaces the record: temporary file, fsync, rename, fsync of the product folder.
    func writeRecord(_ data: Data, into product: Int32, path: String) throws {
        let temporary = ".\(Installer.recordName).tmp-" + randomSuffix()
        let recordPath = path + "/" + Installer.recordName
        let fd = openat(product, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw InstallError.io(path: recordPath, "cannot write the record: \(errnoText())") }
        do {
            fchmod(fd, 0o644)
            try data.withUnsafeBytes { try writeAll(fd, $0, path: recordPath) }
            try check(fsync(fd), recordPath)
            close(fd)
            try check(renameat(product, temporary, product, Installer.recordName), recordPath)
        } catch {
            close(fd)
            unlinkat(product, temporary, 0)
            throw error
        }
        fsync(product)
    }

    /// Names of the version folders (real folders whose name is a ContentVersion), highest first.
    func versionFolders(_ product: Int32, path: String) throws -> [String] {
        var result: [(ContentVersion, String)] = []
        for name in try listNames(product, path: path) {
            guard let version = ContentVersion(name) else { continue }
            var info = stat()
            guard fstatat(product, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { continue }
            if info.st_mode & S_IFMT == S_IFLNK {
                throw InstallError.unsafeDestination(path: path + "/" + name, "is a symbolic link: refusing to use it")
            }
            if info.st_mode & S_IFMT == S_IFDIR { result.append((version, name)) }
        }
        return result.sorted { $0.0 > $1.0 || ($0.0 == $1.0 && $0.1 > $1.1) }.map(\.1)
    }

    func removeLeftovers(_ product: Int32, path: String) throws {
        // A --force replacement killed between its two renames left the current version's folder
        // under `.replacing-*`: put it back before anything else.
        if let current = readRecordVersion(product) {
            var info = stat()
            if fstatat(product, current, &info, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT,
               let moved = try listNames(product, path: path).first(where: { $0.hasPrefix(Installer.replacingPrefix) }) {
                try check(renameat(product, moved, product, current), path + "/" + current)
            }
        }
        for name in try listNames(product, path: path)
        where name.hasPrefix(Installer.stagingPrefix) || name.hasPrefix(Installer.oldPrefix)
            || name.hasPrefix(Installer.replacingPrefix)
            || name.hasPrefix(".\(Installer.recordName).tmp-") {
            try removeTree(product, name: name)
        }
    }

    func prune(_ product: Int32, path: String, current: String?, keep: Int) throws -> [String] {
        let currentVersion = current.flatMap(ContentVersion.init)
        let others = try versionFolders(product, path: path).filter { name in
            guard let currentVersion else { return true }
            return ContentVersion(name) != currentVersion
        }
        let keepOthers = currentVersion == nil ? keep : keep - 1
        let doomed = Array(others.dropFirst(max(keepOthers, 0)))
        for name in doomed {
            // Rename away first so a half-removed folder never looks like a version.
            let old = Installer.oldPrefix + randomSuffix()
            try check(renameat(product, name, product, old), path + "/" + name)
            try removeTree(product, name: old)
        }
        if !doomed.isEmpty { fsync(product) }
        return doomed
    }
}
