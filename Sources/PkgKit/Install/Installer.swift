internal import CSyscalls
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Crypto
import Foundation

/// What `Installer.install` did.
public enum InstallStatus: String, Sendable, Codable {
    /// A version folder was written (or the record now points at an identical one).
    case installed
    /// The same version with the same files was already current: nothing was written.
    case unchanged
    /// The package is invalid, or the install was refused (see the diagnostics).
    case refused
}

/// The options of one install (the flags of `pkgtool extract`).
public struct InstallOptions: Sendable {
    /// `--product-id`: the IAPProductIdentifier the package must have.
    public var expectedProductIdentifier: String?
    /// The size limits (`--max-size`).
    public var limits: PackageLimits
    /// `--keep N`: afterwards keep the current version plus the newest N − 1 others. nil keeps all.
    public var keep: Int?
    /// `--allow-downgrade`: install a version lower than the current one.
    public var allowDowngrade: Bool
    /// `--force`: replace an installed folder of the same version whose files differ.
    public var force: Bool

    public init(expectedProductIdentifier: String? = nil, limits: PackageLimits = PackageLimits(),
                keep: Int? = nil, allowDowngrade: Bool = false, force: Bool = false) {
        self.expectedProductIdentifier = expectedProductIdentifier
        self.limits = limits
        self.keep = keep
        self.allowDowngrade = allowDowngrade
        self.force = force
    }
}

/// The result of one install: `pkgtool extract --json` (SPEC section 5).
public struct InstallReport: Sendable, Encodable {
    public var status: InstallStatus
    public var productIdentifier: String?
    public var contentVersion: String?
    /// The version the record named before this run, if any.
    public var previousVersion: String?
    /// `DIR/<id>/<version>` when installed or unchanged.
    public var installedPath: String?
    public var fileCount: Int
    public var payloadBytes: Int64
    /// Version folders removed by `--keep`.
    public var removedVersions: [String]
    public var diagnostics: [Diagnostic]

    enum CodingKeys: String, CodingKey {
        case status, productIdentifier, contentVersion, previousVersion, installedPath, fileCount, payloadBytes,
             removedVersions, diagnostics
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(status, forKey: .status)
        try c.encode(productIdentifier, forKey: .productIdentifier)
        try c.encode(contentVersion, forKey: .contentVersion)
        try c.encode(previousVersion, forKey: .previousVersion)
        try c.encode(installedPath, forKey: .installedPath)
        try c.encode(fileCount, forKey: .fileCount)
        try c.encode(payloadBytes, forKey: .payloadBytes)
        try c.encode(removedVersions, forKey: .removedVersions)
        try c.encode(diagnostics, forKey: .diagnostics)
    }
}

/// Why an install could not be done (exit status 2). The previous version and its record are
/// intact whenever this is thrown.
public enum InstallError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A system call failed (read-only folder, disk full, …).
    case io(path: String, String)
    /// The destination is not safe to write into (a symbolic link where a folder must be).
    case unsafeDestination(path: String, String)
    /// The package's data differed on the second read from what validation saw, or passed the size limit.
    case packageChanged(String)

    public var description: String {
        switch self {
        case .io(let path, let message): return "\(path): \(message)"
        case .unsafeDestination(let path, let message): return "\(path): \(message)"
        case .packageChanged(let message): return message
        }
    }
}

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
        guard let product = try openProduct(productIdentifier, create: false) else { return nil }
        defer { close(product) }
        return readRecordVersion(product)
    }

    /// The installed version folders of a product, highest version first.
    public func listVersions(productIdentifier: String) throws -> [String] {
        guard let product = try openProduct(productIdentifier, create: false) else { return [] }
        defer { close(product) }
        return try versionFolders(product, path: productPath(productIdentifier))
    }

    /// Removes version folders, keeping the current one plus the newest `keep − 1` others.
    /// Returns the names removed.
    public func prune(productIdentifier: String, keep: Int) throws -> [String] {
        precondition(keep >= 1, "keep must be at least 1")
        guard let product = try openProduct(productIdentifier, create: false) else { return [] }
        defer { close(product) }
        let lock = try takeLock(product, path: productPath(productIdentifier))
        defer { close(lock) }
        return try prune(product, path: productPath(productIdentifier), current: readRecordVersion(product), keep: keep)
    }

    // MARK: - Install

    /// Validates the package at `packagePath` and installs it. An invalid package or a refused
    /// install returns a report with status `refused` and writes nothing.
    /// Throws `ReadError` when the package cannot be read, `InstallError` on any write failure.
    public func install(_ packagePath: String, options: InstallOptions = InstallOptions()) throws -> InstallReport {
        let context = RuleContext(purpose: .extract, limits: options.limits,
                                  expectedProductIdentifier: options.expectedProductIdentifier)
        let validation = try PackageCheck.run(packagePath, context: context)
        let facts = validation.facts
        var report = InstallReport(status: .refused, productIdentifier: validation.contentInfo?.productIdentifier,
                                   contentVersion: validation.contentInfo?.contentVersion, previousVersion: nil,
                                   installedPath: nil, fileCount: facts.fileCount, payloadBytes: facts.payloadBytes,
                                   removedVersions: [], diagnostics: validation.diagnostics)
        guard validation.isValid(), let info = validation.contentInfo, let version = ContentVersion(info.contentVersion),
              let record = facts.contentInfoData, var expected = PayloadDigests.of(facts) else {
            return report
        }
        // Hard links install as links to their target, so the installed tree shows the target's data.
        for entry in facts.entries where entry.kind == .hardlink {
            if let relative = entry.path.contentsRelative, let target = entry.hardlinkTarget?.contentsRelative {
                expected[relative] = expected[target]
            }
        }
        let id = info.productIdentifier
        let productPath = productPath(id)
        try ensureDocuments()
        guard let product = try openProduct(id, create: true) else {
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
        var replaceExisting = false
        if let existing {
            let installed = try digests(of: product, name: existing, path: installedPath)
            if installed == expected {
                report.installedPath = installedPath
                if let current, current == version {
                    report.status = .unchanged
                } else {
                    try writeRecord(record, into: product, path: productPath)
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
            replaceExisting = true
        }

        // Stage, flush, rename into place.
        let staging = Installer.stagingPrefix + randomSuffix()
        do {
            try stage(packagePath, facts: facts, expected: expected, limits: options.limits,
                      into: product, name: staging, productPath: productPath)
            if replaceExisting {
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

    /// Puts the staged folder in the place of an installed version. On Linux the two swap in one
    /// atomic step (`renameat2(RENAME_EXCHANGE)`), so the version folder never goes missing;
    /// elsewhere two renames, and a run killed between them is repaired by the next one.
    private func replace(_ folderName: String, with staging: String, in product: Int32, path productPath: String) throws {
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

    private func ensureDocuments() throws {
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

    /// Opens `DIR/<id>` without following a link; creates it when asked. nil when absent.
    private func openProduct(_ id: String, create: Bool) throws -> Int32? {
        guard ProductIdentifier.problem(with: id) == nil else {
            throw InstallError.unsafeDestination(path: productPath(id), "not a valid IAPProductIdentifier")
        }
        let docs = open(documents, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard docs >= 0 else {
            if errno == ENOENT && !create { return nil }
            throw InstallError.io(path: documents, errnoText())
        }
        defer { close(docs) }
        if create, mkdirat(docs, id, 0o755) != 0, errno != EEXIST {
            throw InstallError.io(path: productPath(id), "cannot create the product folder: \(errnoText())")
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
        return fd
    }

    private func takeLock(_ product: Int32, path: String) throws -> Int32 {
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
    private func readRecordVersion(_ product: Int32) -> String? {
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
    private func writeRecord(_ data: Data, into product: Int32, path: String) throws {
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
    private func versionFolders(_ product: Int32, path: String) throws -> [String] {
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

    private func removeLeftovers(_ product: Int32, path: String) throws {
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

    private func prune(_ product: Int32, path: String, current: String?, keep: Int) throws -> [String] {
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

    // MARK: - Staging

    /// Streams the package a second time and writes the tree below `Contents/` into `name`.
    private func stage(_ packagePath: String, facts: PackageFacts, expected: [String: String], limits: PackageLimits,
                       into product: Int32, name: String, productPath: String) throws {
        let stagingPath = productPath + "/" + name
        try check(mkdirat(product, name, 0o755), stagingPath)
        let root = openat(product, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard root >= 0 else { throw InstallError.io(path: stagingPath, errnoText()) }
        fchmod(root, 0o755)
        let tree = StagingTree(root: root, path: stagingPath)
        defer { tree.closeAll() }

        let opened = try PackageOpener.open(packagePath, limits: limits)
        if let failure = opened.facts.readFailures.first {
            throw InstallError.packageChanged("\(packagePath): \(failure.message)")
        }
        let reader = opened.reader
        var total: Int64 = 0
        var hardlinks: [(String, String)] = []
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)
        defer { buffer.deallocate() }
        while let entry = try reader.nextEntry() {
            guard let relative = entry.path.contentsRelative, !relative.isEmpty else { continue }
            let parts = relative.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            guard parts.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." }) else {
                throw InstallError.packageChanged("\(entry.path): unsafe path on the second read")
            }
            switch entry.kind {
            case .directory:
                _ = try tree.directory(parts)
            case .file:
                let parent = try tree.directory(Array(parts.dropLast()))
                let filePath = stagingPath + "/" + relative
                let fd = openat(parent, parts.last!, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
                guard fd >= 0 else { throw InstallError.io(path: filePath, errnoText()) }
                defer { close(fd) }
                fchmod(fd, 0o644)
                var sha1 = Insecure.SHA1()
                while true {
                    let count = try reader.readData(into: buffer)
                    if count == 0 { break }
                    total += Int64(count)
                    if total > limits.maxSize {
                        throw InstallError.packageChanged("the payload passed the size limit of \(limits.maxSize) bytes while installing")
                    }
                    let chunk = UnsafeRawBufferPointer(rebasing: buffer[0..<count])
                    sha1.update(bufferPointer: chunk)
                    try writeAll(fd, chunk, path: filePath)
                }
                guard sha1.finalize().hexString == expected[relative] else {
                    throw InstallError.packageChanged("\(entry.path): the data differs from what validation read: the package changed while being installed")
                }
            case .symlink:
                let parent = try tree.directory(Array(parts.dropLast()))
                let target = String(decoding: entry.linkTarget ?? [], as: UTF8.self)
                guard "link:" + target == expected[relative] else {
                    throw InstallError.packageChanged("\(entry.path): the link differs from what validation read")
                }
                try check(symlinkat(target, parent, parts.last!), stagingPath + "/" + relative)
            case .hardlink:
                if let target = entry.hardlinkTarget?.contentsRelative { hardlinks.append((relative, target)) }
            default:
                throw InstallError.packageChanged("\(entry.path): unexpected entry type on the second read")
            }
        }
        for (relative, target) in hardlinks {
            let targetParts = target.split(separator: "/").map(String.init)
            let parts = relative.split(separator: "/").map(String.init)
            let from = try tree.directory(Array(targetParts.dropLast()), create: false)
            let to = try tree.directory(Array(parts.dropLast()))
            try check(linkat(from, targetParts.last!, to, parts.last!, 0), stagingPath + "/" + relative)
        }
        try tree.syncAll()
    }

    // MARK: - Installed digests

    /// sha1 of each file and `link:` + target of each link in an installed version folder.
    private func digests(of product: Int32, name: String, path: String) throws -> [String: String] {
        let fd = openat(product, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw InstallError.io(path: path, errnoText()) }
        defer { close(fd) }
        var result: [String: String] = [:]
        try collectDigests(fd, prefix: "", path: path, into: &result)
        return result
    }

    private func collectDigests(_ dir: Int32, prefix: String, path: String, into result: inout [String: String]) throws {
        for name in try listNames(dir, path: path) {
            let relative = prefix + name
            var info = stat()
            guard fstatat(dir, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { throw InstallError.io(path: path + "/" + name, errnoText()) }
            switch info.st_mode & S_IFMT {
            case S_IFDIR:
                let child = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                guard child >= 0 else { throw InstallError.io(path: path + "/" + name, errnoText()) }
                defer { close(child) }
                try collectDigests(child, prefix: relative + "/", path: path + "/" + name, into: &result)
            case S_IFLNK:
                var target = [UInt8](repeating: 0, count: 4097)
                let count = readlinkat(dir, name, &target, target.count - 1)
                guard count >= 0 else { throw InstallError.io(path: path + "/" + name, errnoText()) }
                result[relative] = "link:" + String(decoding: target[0..<count], as: UTF8.self)
            case S_IFREG:
                let file = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
                guard file >= 0 else { throw InstallError.io(path: path + "/" + name, errnoText()) }
                defer { close(file) }
                var sha1 = Insecure.SHA1()
                var buffer = [UInt8](repeating: 0, count: 1 << 16)
                while true {
                    let count = read(file, &buffer, buffer.count)
                    if count < 0 { throw InstallError.io(path: path + "/" + name, errnoText()) }
                    if count == 0 { break }
                    buffer.withUnsafeBytes { sha1.update(bufferPointer: UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
                }
                result[relative] = sha1.finalize().hexString
            default:
                result[relative] = "special"
            }
        }
    }
}

// MARK: - Descriptor helpers

/// Directories created in a staging folder, opened relative to one another without following links.
private final class StagingTree {
    let root: Int32
    let path: String
    private var open: [String: Int32] = [:]

    init(root: Int32, path: String) {
        self.root = root
        self.path = path
    }

    /// The descriptor of the folder `parts` below the root, made (0755) when missing.
    func directory(_ parts: [String], create: Bool = true) throws -> Int32 {
        if parts.isEmpty { return root }
        let key = parts.joined(separator: "/")
        if let fd = open[key] { return fd }
        if open.count > 256 { closeFolders() }
        let parent = try directory(Array(parts.dropLast()), create: create)
        let name = parts.last!
        if create, mkdirat(parent, name, 0o755) != 0, errno != EEXIST {
            throw InstallError.io(path: path + "/" + key, errnoText())
        }
        let fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw InstallError.io(path: path + "/" + key, errnoText()) }
        fchmod(fd, 0o755)
        open[key] = fd
        return fd
    }

    /// Closes the folders opened so far (they are reopened on demand).
    func closeFolders() {
        for fd in open.values { close(fd) }
        open.removeAll()
    }

    /// Makes every file and folder written so far durable, in one batch: one `syncfs` of the
    /// file system costs a fraction of an fsync per file, which on 10,000 files is most of the
    /// install's time.
    func syncAll() throws {
        #if os(Linux)
        if CSyscalls_syncfs(root) != 0 { throw InstallError.io(path: path, errnoText()) }
        #else
        sync()
        if fsync(root) != 0 { throw InstallError.io(path: path, errnoText()) }
        #endif
    }

    func closeAll() {
        closeFolders()
        close(root)
    }
}

private func check(_ result: Int32, _ path: String) throws {
    if result != 0 { throw InstallError.io(path: path, errnoText()) }
}

private func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws {
    var offset = 0
    while offset < bytes.count {
        let written = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
        if written < 0 {
            if errno == EINTR { continue }
            throw InstallError.io(path: path, errnoText())
        }
        offset += written
    }
}

/// The entry names in a folder, `.` and `..` left out.
private func listNames(_ dir: Int32, path: String) throws -> [String] {
    let fd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard fd >= 0, let stream = fdopendir(fd) else {
        if fd >= 0 { close(fd) }
        throw InstallError.io(path: path, errnoText())
    }
    defer { closedir(stream) }
    var names: [String] = []
    while let entry = readdir(stream) {
        let name = withUnsafePointer(to: &entry.pointee.d_name) {
            $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
        }
        if name != "." && name != ".." { names.append(name) }
    }
    return names
}

/// Removes `name` in `dir` and everything below it, never following a link.
private func removeTree(_ dir: Int32, name: String) throws {
    var info = stat()
    guard fstatat(dir, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else {
        if errno == ENOENT { return }
        throw InstallError.io(path: name, errnoText())
    }
    if info.st_mode & S_IFMT == S_IFDIR {
        let child = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard child >= 0 else { throw InstallError.io(path: name, errnoText()) }
        defer { close(child) }
        for inner in try listNames(child, path: name) { try removeTree(child, name: inner) }
        try check(unlinkat(dir, name, AT_REMOVEDIR), name)
    } else {
        try check(unlinkat(dir, name, 0), name)
    }
}

private func randomSuffix() -> String {
    (0..<12).map { _ in String("0123456789abcdefghijklmnopqrstuvwxyz".randomElement()!) }.joined()
}
