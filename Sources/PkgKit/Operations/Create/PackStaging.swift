import Foundation
import PkgKitSupport
import PkgKitFormat
import PkgKitChecking
import PkgKitInstall

/// The hidden staging area of one conversion inside the output folder: pack folders and files
/// are written under `.pkgtool-convert-<pid>-<random>-<name>`, flushed, and renamed over their
/// real names only by `commit`, so that until then the output folder shows nothing new.
///
/// Every write goes through the output folder's descriptor without following links (the
/// installer's `StagingWriter` writes each pack's Contents/). Staging left by a process that
/// was killed is removed by the next conversion into the same folder (its process id is gone).
final class PackStaging {
    package static let prefix = ".pkgtool-convert-"

    /// The output folder's path.
    package let output: String
    /// Its descriptor.
    private let folder: Int32
    /// This conversion's prefix: `.pkgtool-convert-<pid>-<random>-`.
    private let mine: String
    /// Names staged so far, in the output folder.
    private var staged: [String] = []
    /// Folders this conversion created (the output folder and missing parents), outermost first.
    private let created: [String]
    private var done = false

    /// Opens (creating, with its parents) the output folder and removes the staging of dead runs.
    package init(output: String) throws {
        self.output = output
        created = try makeFolders(output)
        let fd = open(output, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else {
            throw errno == ENOTDIR ? InstallError.notAFolder(path: output) : InstallError.io(path: output, errnoText())
        }
        folder = fd
        mine = PackStaging.prefix + "\(getpid())-" + randomSuffix() + "-"
        try removeLeftovers()
    }

    deinit {
        discard()
        close(folder)
    }

    /// Reads `package` in full, checking it, while its Contents/ tree is written into the pack
    /// folder `packID`'s staging, and adds its ContentInfo.plist when the package is valid.
    func stage(_ package: String, as packID: String, context: RuleContext, digests: Bool,
               options: ConvertOptions) throws -> PackageCheck {
        let name = mine + packID
        try checkCall(mkdirat(folder, name, 0o755), output + "/" + name)
        staged.append(name)
        let pack = openat(folder, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard pack >= 0 else { throw InstallError.io(path: output + "/" + name, errnoText()) }
        defer { close(pack) }
        fchmod(pack, 0o755)
        let writer = try StagingWriter(product: pack, name: "Contents", productPath: output + "/" + name)
        // Files are written on a second thread while this one reads and verifies.
        let background = BackgroundSink(writer)
        let result: PackageCheck
        do {
            result = try PackageCheck.run(package, context: context, digests: digests,
                                          sink: background, cancellation: options.cancellation, progress: options.progress)
            try background.drain()
        } catch {
            // The writing thread must have stopped before its folder is removed.
            try? background.drain()
            throw error
        }
        guard result.isValid(), let plist = result.facts.contentInfoData else { return result }
        try writeFile(ContentInfo.fileName, plist, in: pack, path: output + "/" + name)
        // Hard links, then one flush of everything written.
        try writer.finish()
        return result
    }

    /// Stages a file that `commit` renames to `name` in the output folder.
    func stageFile(_ name: String, _ data: Data) throws {
        let temporary = mine + name
        staged.append(temporary)
        try writeFile(temporary, data, in: folder, path: output + "/" + name)
    }

    /// Moves everything staged into place: each pack folder over its namesake (swapped in one
    /// step where the system can), then each file. Nothing is moved if any name is taken by
    /// something that cannot be replaced (a folder where a file goes).
    package func commit(packIDs: [String]) throws {
        let files = staged.filter { name in !packIDs.contains { mine + $0 == name } }.map { String($0.dropFirst(mine.count)) }
        for name in files {
            var info = stat()
            if fstatat(folder, name, &info, AT_SYMLINK_NOFOLLOW) == 0 && info.st_mode & S_IFMT == S_IFDIR {
                throw InstallError.io(path: output + "/" + name, "is a folder: remove it, convert writes a file there")
            }
        }
        for packID in packIDs {
            var info = stat()
            if fstatat(folder, packID, &info, AT_SYMLINK_NOFOLLOW) == 0 {
                try replaceFolder(packID, with: mine + packID, in: folder, path: output)
            } else {
                try checkCall(renameat(folder, mine + packID, folder, packID), output + "/" + packID)
            }
        }
        for name in files {
            try checkCall(renameat(folder, mine + name, folder, name), output + "/" + name)
        }
        fsync(folder)
        staged.removeAll()
        done = true
    }

    /// Removes everything staged, and the folders this conversion created when they are empty.
    /// Does nothing after `commit`, or when called again.
    package func discard() {
        guard !done else { return }
        done = true
        for name in staged { try? removeTree(folder, name: name) }
        staged.removeAll()
        for path in created.reversed() { rmdir(path) }
    }

    /// Writes `data` to `name` in `directory` (created exclusively, 0644, flushed).
    private func writeFile(_ name: String, _ data: Data, in directory: Int32, path: String) throws {
        let fd = openat(directory, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw InstallError.io(path: path, errnoText()) }
        defer { close(fd) }
        fchmod(fd, 0o644)
        try data.withUnsafeBytes { try writeAll(fd, $0, path: path) }
        try checkCall(fsync(fd), path)
    }

    /// Removes staging whose process is gone (killed mid-conversion).
    private func removeLeftovers() throws {
        for name in try listNames(folder, path: output) where name.hasPrefix(PackStaging.prefix) {
            let pid = name.dropFirst(PackStaging.prefix.count).prefix { $0 != "-" }
            guard let number = Int32(pid), number != getpid(), kill(number, 0) != 0, errno == ESRCH else { continue }
            try removeTree(folder, name: name)
        }
    }
}
