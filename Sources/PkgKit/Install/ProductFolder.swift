import Foundation
import PkgKitSupport
import PkgKitIdentity
import PkgKitFormat
internal import CSyscalls

/// One product's folder, `DIR/<IAPProductIdentifier>/`, opened without following links and
/// locked (`flock` on `.lock`) for as long as this value lives: everything an install, a sync or a
/// prune does to a product happens through it, serialised with every other process.
///
/// It holds the version folders, the record (`ContentInfo.plist`, naming the current one) and the
/// work in progress (`.staging-*`, `.download-*`), and repairs what an interrupted run left.
// Sendable: every stored property is immutable; the descriptors are used with *at calls, which
// the kernel serialises, and a sync hands the folder from task to install thread.
package final class ProductFolder: Sendable {

    /// The product identifier, which is the folder's name.
    package let identifier: String
    /// `DIR/<id>`, for messages.
    package let path: String
    /// The open folder.
    package let descriptor: Int32
    /// True when this value created the folder (an install that turns out refused removes it again).
    package let created: Bool
    private let lock: Int32

    package static let recordName = ContentInfo.fileName
    package static let lockName = ".lock"
    static let stagingPrefix = ".staging-"
    static let oldPrefix = ".old-"
    static let replacingPrefix = ".replacing-"
    static let recordTemporaryPrefix = ".\(ContentInfo.fileName).tmp-"
    /// A delta update's sparse copy of the package; never resumed, so always a leftover.
    package static let deltaPrefix = ".delta-"
    /// A copy of content an app already had, being adopted as a version (`SyncClient.adopt`):
    /// the files a delta reuses, taken from there; a leftover once that run has ended.
    package static let adoptionPrefix = ".adopting-"
    /// A full download in progress: kept, and resumed by the next sync.
    package static func downloadName(_ version: String) -> String { ".download-\(version).part" }
    /// True for the name of a full download in progress (`downloadName`).
    package static func isDownload(_ name: String) -> Bool { name.hasPrefix(".download-") && name.hasSuffix(".part") }

    /// Opens (and, when `create`, makes) `documents/<id>` and takes its lock, waiting for another
    /// process that holds it; nil when the folder is absent and `create` is false. With `locking`
    /// false the folder is opened to be looked at only: no lock is taken (or created), nothing
    /// waits, and nothing may be written through it.
    package static func open(documents: String, identifier: String, create: Bool, locking: Bool = true,
                     cancellation: Cancellation? = nil) throws -> ProductFolder? {
        let path = documents + "/" + identifier
        guard ProductIdentifier.problem(with: identifier) == nil else {
            throw InstallError.unsafeDestination(path: path, "not a valid IAPProductIdentifier")
        }
        if create { try ensureFolder(documents) }
        let docs = openDirectory(documents)
        guard docs >= 0 else {
            if errno == ENOENT && !create { return nil }
            throw InstallError.io(path: documents, errnoText())
        }
        defer { close(docs) }
        var created = false
        if create {
            if mkdirat(docs, identifier, 0o755) == 0 {
                created = true
            } else if errno != EEXIST {
                throw InstallError.io(path: path, "cannot create the product folder: \(errnoText())")
            }
        }
        let fd = openat(docs, identifier, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        if fd < 0 {
            let code = errno
            if code == ENOENT && !create { return nil }
            var info = stat()
            if fstatat(docs, identifier, &info, AT_SYMLINK_NOFOLLOW) == 0, info.st_mode & S_IFMT == S_IFLNK {
                throw InstallError.unsafeDestination(path: path, "is a symbolic link: refusing to install through it")
            }
            throw InstallError.io(path: path, String(cString: strerror(code)))
        }
        do {
            let lock = locking ? try takeLock(fd, path: path, cancellation: cancellation) : -1
            return ProductFolder(identifier: identifier, path: path, descriptor: fd, created: created, lock: lock)
        } catch {
            close(fd)
            throw error
        }
    }

    private init(identifier: String, path: String, descriptor: Int32, created: Bool, lock: Int32) {
        self.identifier = identifier
        self.path = path
        self.descriptor = descriptor
        self.created = created
        self.lock = lock
    }

    deinit {
        if lock >= 0 { close(lock) }
        close(descriptor)
    }

    /// Creates the Documents folder, with its missing parents (docs/commands.md: every command
    /// creates the missing parents of an output path it was given).
    static func ensureFolder(_ documents: String) throws {
        var info = stat()
        if stat(documents, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFDIR else { throw InstallError.io(path: documents, "not a folder") }
            return
        }
        try makeFolders(documents)
    }

    /// Waits for the product's lock without blocking signals: a set `cancellation` ends the wait.
    private static func takeLock(_ product: Int32, path: String, cancellation: Cancellation?) throws -> Int32 {
        var fd = openat(product, lockName, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o644)
        if fd < 0 && (errno == EROFS || errno == EACCES) {
            // A folder that cannot be written can still be read: an install that turns out to
            // have nothing to write (the same version again) must not fail for the lock. Where
            // the lock file is there, its lock still serialises this run with the others; where
            // it is not, nobody can be writing into the folder either.
            fd = openat(product, lockName, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
            if fd < 0 && errno == ENOENT { return -1 }
        }
        guard fd >= 0 else { throw InstallError.io(path: path + "/" + lockName, "cannot open the lock file: \(errnoText())") }
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else {
                let message = errnoText()
                close(fd)
                throw InstallError.io(path: path + "/" + lockName, "cannot lock: \(message)")
            }
            if cancellation?.isCancelled == true {
                close(fd)
                throw OperationCancelled()
            }
            usleep(20_000)
        }
        return fd
    }

    /// `path/name`.
    package func path(_ name: String) -> String { path + "/" + name }

    // MARK: - The record

    /// The ContentVersion the record names, or nil.
    package func recordVersion() -> String? {
        let fd = openat(descriptor, Self.recordName, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
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
    func writeRecord(_ data: Data) throws {
        let temporary = Self.recordTemporaryPrefix + randomSuffix()
        let recordPath = path(Self.recordName)
        let fd = openat(descriptor, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw InstallError.io(path: recordPath, "cannot write the record: \(errnoText())") }
        do {
            fchmod(fd, 0o644)
            try data.withUnsafeBytes { try writeAll(fd, $0, path: recordPath) }
            try checkCall(fsync(fd), recordPath)
            close(fd)
            try checkCall(renameat(descriptor, temporary, descriptor, Self.recordName), recordPath)
        } catch {
            close(fd)
            unlinkat(descriptor, temporary, 0)
            throw error
        }
        fsync(descriptor)
    }

    // MARK: - Version folders

    /// Names of the version folders (real folders whose name is a ContentVersion), highest first.
    package func versionFolders() throws -> [String] {
        var result: [(ContentVersion, String)] = []
        for name in try listNames(descriptor, path: path) {
            guard let version = ContentVersion(name) else { continue }
            var info = stat()
            guard fstatat(descriptor, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { continue }
            if info.st_mode & S_IFMT == S_IFLNK {
                throw InstallError.unsafeDestination(path: path(name), "is a symbolic link: refusing to use it")
            }
            if info.st_mode & S_IFMT == S_IFDIR { result.append((version, name)) }
        }
        return result.sorted { $0.0 > $1.0 || ($0.0 == $1.0 && $0.1 > $1.1) }.map(\.1)
    }

    /// The folder holding `version` (compared numerically: `1.0` holds `1.0.0`), if any.
    package func folder(for version: ContentVersion) throws -> String? {
        try versionFolders().first { ContentVersion($0) == version }
    }

    /// Renames `name` to `newName` in this folder.
    package func rename(_ name: String, to newName: String) throws {
        try checkCall(renameat(descriptor, name, descriptor, newName), path(newName))
    }

    /// Removes `name` and everything below it, never following a link.
    package func remove(_ name: String) throws {
        try removeTree(descriptor, name: name)
    }

    /// Puts the staged folder in the place of an installed version (see `replaceFolder`).
    package func replace(_ folderName: String, with staging: String) throws {
        try replaceFolder(folderName, with: staging, in: descriptor, path: path)
    }

    /// Repairs and removes what an interrupted run left: a version moved aside by a `--force`
    /// replacement is put back, staging folders, delta copies, temporary records and stat caches
    /// without their folder go (a download in progress stays, to be resumed), and a version folder
    /// that equals the current one in number but not in name (left by a run killed between
    /// making `1.0.0` current and removing the `1.0` it replaced) is removed. `keeping` names a
    /// leftover the caller is about to use (the adopted copy an update reuses files from).
    package func removeLeftovers(keeping kept: String? = nil) throws {
        if let current = recordVersion() {
            var info = stat()
            if fstatat(descriptor, current, &info, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT,
               let moved = try listNames(descriptor, path: path).first(where: { $0.hasPrefix(Self.replacingPrefix) }) {
                try rename(moved, to: current)
            }
            if let version = ContentVersion(current), try versionFolders().contains(current) {
                for name in try versionFolders() where name != current && ContentVersion(name) == version {
                    try retire(name)
                }
            }
        }
        let versions = Set(try versionFolders())
        for name in try listNames(descriptor, path: path)
        where name != kept && (name.hasPrefix(Self.stagingPrefix) || name.hasPrefix(Self.oldPrefix) || name.hasPrefix(Self.deltaPrefix)
            || name.hasPrefix(Self.adoptionPrefix) || name.hasPrefix(Self.replacingPrefix) || name.hasPrefix(Self.recordTemporaryPrefix)
            || BesideVersion.all.contains(where: { $0.isLeftover(name, versions: versions) })) {
            try remove(name)
        }
    }

    /// Removes a version folder, renamed away first so that a half-removed folder never looks like
    /// a version, and its stat cache and chunk index.
    func retire(_ name: String) throws {
        let old = Self.oldPrefix + randomSuffix()
        try rename(name, to: old)
        for kind in BesideVersion.all { kind.remove(self, version: name) }
        try remove(old)
    }

    /// Removes version folders, keeping `current` plus the newest `keep − 1` others; the names removed.
    package func prune(current: String?, keep: Int) throws -> [String] {
        let currentVersion = current.flatMap(ContentVersion.init)
        let others = try versionFolders().filter { name in
            guard let currentVersion else { return true }
            return ContentVersion(name) != currentVersion
        }
        let keepOthers = currentVersion == nil ? keep : keep - 1
        let doomed = Array(others.dropFirst(max(keepOthers, 0)))
        for name in doomed { try retire(name) }
        if !doomed.isEmpty { fsync(descriptor) }
        return doomed
    }

    /// Removes the folder again when this value created it and it holds nothing but the lock: a
    /// refused install leaves nothing behind.
    package func removeIfCreatedAndEmpty() {
        guard created, let names = try? listNames(descriptor, path: path), names == [Self.lockName] else { return }
        unlinkat(descriptor, Self.lockName, 0)
        rmdir(path)
    }
}
