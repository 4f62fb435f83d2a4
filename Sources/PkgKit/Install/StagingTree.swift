internal import CSyscalls
import Foundation
import PkgKitSupport

/// Directories created in a staging folder, opened relative to one another without following links.
final class StagingTree {
    package let root: Int32
    package let path: String
    private var open: [String: Int32] = [:]
    /// The folder the last `directory(relative:)` call answered: entries come folder by folder.
    private var last: (key: String, descriptor: Int32)?

    package init(root: Int32, path: String) {
        self.root = root
        self.path = path
    }

    /// The descriptor of the folder `parts` below the root, made (0755) when missing. It stays
    /// open until the next `trim`.
    package func directory(_ parts: [String], create: Bool = true) throws -> Int32 {
        if parts.isEmpty { return root }
        let key = parts.joined(separator: "/")
        if let fd = open[key] { return fd }
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

    /// The folder `relative` ("a/b"; empty for the root), its components already checked, made
    /// when missing; the previous call's folder is answered without taking the path apart.
    package func directory(relative folder: Substring, create: Bool = true) throws -> Int32 {
        if folder.isEmpty { return root }
        if let last, last.key == folder { return last.descriptor }
        let descriptor = try directory(folder.split(separator: "/", omittingEmptySubsequences: false).map(String.init), create: create)
        last = (String(folder), descriptor)
        return descriptor
    }

    /// Bounds the open descriptors. Called between entries, never while a caller still holds a
    /// descriptor from `directory` (a hard link needs two at once).
    func trim() {
        if open.count > 256 { closeFolders() }
    }

    /// Closes the folders opened so far (they are reopened on demand).
    func closeFolders() {
        for fd in open.values { close(fd) }
        open.removeAll()
        last = nil
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
