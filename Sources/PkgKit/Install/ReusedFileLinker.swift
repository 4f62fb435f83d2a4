import Crypto
import Foundation
import PkgKitSupport
import PkgKitFormat
internal import CSyscalls

/// Puts a file of the package that is on hand in the product folder (an `InstalledFile`) into a
/// staging folder: a hard link to that file where the file system allows,
/// else a copy checked against its sha1. Either way only if it is still the very file that was
/// hashed when the update was planned (same device, inode, size, modification and change times);
/// otherwise the install fails and nothing is installed.
///
/// A hard link makes the two version folders share the file: version folders are read-only
/// snapshots (the README says so), and an app that edits installed content breaks that.
final class ReusedFileLinker {
    /// The product folder.
    package let product: Int32
    package let productPath: String
    /// What this install's own links made of the files they reused.
    private let linked: LinkedFiles
    /// The installed folder the last file came from, kept open for the next: files come folder
    /// by folder, and opening every folder of the path again for each file cost more than the link.
    private var source: (top: String, folder: String, descriptor: Int32)?

    package init(product: Int32, productPath: String, linked: LinkedFiles) {
        self.product = product
        self.productPath = productPath
        self.linked = linked
    }

    deinit { closeSource() }

    /// Creates `name` in the folder `parent` with the bytes of `file`, found in the product folder.
    package func place(_ file: InstalledFile, in parent: Int32, name: String, shownAs target: @autoclosure () -> String) throws {
        let relative = file.relativePath
        let sourcePath = { self.productPath + "/" + file.version + "/" + relative }
        guard PathSafety.componentsAreNames(file.version), PathSafety.componentsAreNames(relative) else {
            throw InstallError.packageChanged("\(sourcePath()): not a path inside the installed version")
        }
        let slash = relative.lastIndex(of: "/")
        let folder = try sourceFolder(file.version, slash.map { relative[..<$0] } ?? "", sourcePath: sourcePath)
        let last = String(slash.map { relative[relative.index(after: $0)...] } ?? relative[...])
        let linkedHere: Bool
        if linked.isShared(file.identity) {
            linkedHere = try linked.relinked.withLock { identities -> Bool in
                guard try link(folder, last, to: parent, name, sourcePath: sourcePath,
                               isPlanned: { $0 == file.identity || $0 == identities[file.identity] }) else { return false }
                // The link changed the file's change time: remember it as it is now, so that the
                // new version's other paths with the same bytes can reuse it too.
                var info = stat()
                if fstatat(folder, last, &info, AT_SYMLINK_NOFOLLOW) == 0 { identities[file.identity] = FileIdentity(info) }
                return true
            }
        } else {
            linkedHere = try link(folder, last, to: parent, name, sourcePath: sourcePath, isPlanned: { $0 == file.identity })
        }
        if linkedHere { return }
        guard errno == EPERM || errno == EMLINK || errno == EXDEV || errno == ENOTSUP || errno == EOPNOTSUPP else {
            throw InstallError.io(path: target(), errnoText())
        }
        try copy(from: folder, last, sourcePath: sourcePath(), to: parent, name, target: target(), expected: file.sha1)
    }

    /// Links `name` of `folder` as `newName` in `parent` if it is still a regular file the plan
    /// hashed (`isPlanned`) and has the mode a new version's files have; false, with `errno` set,
    /// when it is to be copied instead.
    private func link(_ folder: Int32, _ name: String, to parent: Int32, _ newName: String, sourcePath: () -> String,
                      isPlanned: (FileIdentity) -> Bool) throws -> Bool {
        var info = stat()
        guard fstatat(folder, name, &info, AT_SYMLINK_NOFOLLOW) == 0, info.st_mode & S_IFMT == S_IFREG, isPlanned(FileIdentity(info)) else {
            throw changed(sourcePath())
        }
        // A file whose mode was changed since it was installed is copied: the new version's files are 0644.
        guard info.st_mode & 0o7777 == 0o644 else {
            errno = EPERM
            return false
        }
        return linkat(folder, name, parent, newName, 0) == 0
    }

    /// The folder `top/relative` of the product folder (components checked by the caller), each
    /// component opened without following links (the installed tree may have been edited); the
    /// one of the last call when it is the same.
    private func sourceFolder(_ top: String, _ relative: Substring, sourcePath: () -> String) throws -> Int32 {
        if let source, source.top == top, source.folder == relative { return source.descriptor }
        closeSource()
        var folder = openat(product, top, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard folder >= 0 else { throw changed(sourcePath()) }
        for component in relative.split(separator: "/") {
            let next = openat(folder, String(component), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            close(folder)
            guard next >= 0 else { throw changed(sourcePath()) }
            folder = next
        }
        source = (top, String(relative), folder)
        return folder
    }

    private func closeSource() {
        if let source { close(source.descriptor) }
        source = nil
    }

    /// The fallback: a copy, hashed on the way and compared with the sha1 the plan relied on.
    private func copy(from folder: Int32, _ name: String, sourcePath: String, to parent: Int32, _ newName: String,
                      target: String, expected: SHA1Value) throws {
        let input = openat(folder, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard input >= 0 else { throw changed(sourcePath) }
        defer { close(input) }
        let output = openat(parent, newName, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard output >= 0 else { throw InstallError.io(path: target, errnoText()) }
        defer { close(output) }
        fchmod(output, 0o644)
        var sha1 = Insecure.SHA1()
        guard try copyContents(input, to: output, target: target, each: { sha1.update(bufferPointer: $0) }) else {
            throw InstallError.io(path: sourcePath, errnoText())
        }
        guard SHA1Value(sha1.finalize()) == expected else { throw changed(sourcePath) }
    }

    private func changed(_ path: String) -> InstallError {
        .packageChanged("\(path): the installed file changed while the update was being installed; run sync again")
    }
}
