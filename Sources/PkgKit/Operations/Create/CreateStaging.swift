import Foundation
import PkgKitSupport
import PkgKitFormat
import PkgKitChecking
import PkgKitInstall

/// Where `create` unpacks a package it was given as its source, so that the package can be
/// rebuilt from a folder like any other: a hidden `.pkgtool-create-<pid>-<random>` folder in the
/// folder the output goes to (the same disk as the output, never a RAM-backed temporary folder),
/// holding the package's `Contents/` and its ContentInfo.plist. It is removed when the create
/// ends; one left by a process that was killed is removed by the next create into that folder.
final class CreateStaging {
    package static let prefix = ".pkgtool-create-"

    /// The staging folder's path: the source of the rebuild.
    package let path: String
    /// The folder it is in.
    private let parent: Int32
    private let name: String
    /// Folders made for it (the output's missing parents), outermost first, removed with it.
    private let created: [String]
    private var removed = false

    /// Makes the staging folder in `folder` (created with its parents when missing) and removes
    /// the staging of dead runs there.
    package init(in folder: String) throws {
        let created = try makeFolders(folder)
        let fd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        let name = Self.prefix + "\(getpid())-" + randomSuffix()
        let path = (folder.hasSuffix("/") ? folder : folder + "/") + name
        do {
            guard fd >= 0 else { throw InstallError.io(path: folder, errnoText()) }
            try Self.removeLeftovers(in: fd, folder)
            try checkCall(mkdirat(fd, name, 0o700), path)
        } catch {
            if fd >= 0 { close(fd) }
            for made in created.reversed() { rmdir(made) }
            throw error
        }
        self.created = created
        parent = fd
        self.name = name
        self.path = path
    }

    deinit {
        remove()
        close(parent)
    }

    /// Removes the staging folder, and the folders made for it when they are empty; once.
    package func remove() {
        guard !removed else { return }
        removed = true
        try? removeTree(parent, name: name)
        for folder in created.reversed() { rmdir(folder) }
    }

    /// Reads the package at `source` in full, judging it by `context`, while its `Contents/` tree
    /// is written into the staging folder; its ContentInfo.plist follows when it has one.
    func unpack(_ source: String, context: RuleContext, cancellation: Cancellation?,
                progress: ((Int64, Int64) -> Void)?) throws -> PackageCheck {
        let folder = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard folder >= 0 else { throw InstallError.io(path: path, errnoText()) }
        defer { close(folder) }
        let writer = try StagingWriter(product: folder, name: "Contents", productPath: path)
        // Files are written on a second thread while this one reads and verifies.
        let background = BackgroundSink(writer)
        let check: PackageCheck
        do {
            check = try PackageCheck.run(source, context: context, digests: false, sink: background,
                                         cancellation: cancellation, progress: progress)
            try background.drain()
        } catch {
            // The writing thread must have stopped before its folder is removed.
            try? background.drain()
            throw error
        }
        // The folder is read back at once and then removed: nothing needs flushing to the disk.
        try writer.linkHardlinks()
        if let plist = check.facts.contentInfoData {
            try plist.write(to: URL(fileURLWithPath: path + "/" + ContentInfo.fileName))
        }
        return check
    }

    /// Removes the staging in `parent` whose process is gone (killed mid-create).
    private static func removeLeftovers(in parent: Int32, _ folder: String) throws {
        for name in try listNames(parent, path: folder) where name.hasPrefix(prefix) {
            let pid = name.dropFirst(prefix.count).prefix { $0 != "-" }
            guard let number = Int32(pid), number != getpid(), kill(number, 0) != 0, errno == ESRCH else { continue }
            try removeTree(parent, name: name)
        }
    }
}
