internal import CSyscalls
import Foundation
import PkgKitSupport

/// Small checked wrappers over the descriptor calls the installer makes.
package func checkCall(_ result: Int32, _ path: String) throws {
    if result != 0 { throw InstallError.io(path: path, errnoText()) }
}

package func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws {
    guard writeFully(fd, bytes) else { throw InstallError.io(path: path, errnoText()) }
}

/// Copies what the open file `input` holds, from where it stands, into `output` (shown as
/// `target`), a MiB at a time, handing each piece to `each` on the way; false when a read failed
/// (`errno` says why), and `InstallError.io` thrown when a write did.
package func copyContents(_ input: Int32, to output: Int32, target: String, each: (UnsafeRawBufferPointer) -> Void = { _ in }) throws -> Bool {
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
    defer { buffer.deallocate() }
    while true {
        let count = readRetrying(input, buffer)
        guard count >= 0 else { return false }
        if count == 0 { return true }
        let chunk = UnsafeRawBufferPointer(rebasing: buffer[0..<count])
        each(chunk)
        try writeAll(output, chunk, path: target)
    }
}

/// The entry names in a folder, `.` and `..` left out.
package func listNames(_ dir: Int32, path: String) throws -> [String] {
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
package func removeTree(_ dir: Int32, name: String) throws {
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
        try checkCall(unlinkat(dir, name, AT_REMOVEDIR), name)
    } else {
        try checkCall(unlinkat(dir, name, 0), name)
    }
}

package func randomSuffix() -> String {
    (0..<12).map { _ in String("0123456789abcdefghijklmnopqrstuvwxyz".randomElement()!) }.joined()
}

/// `createFolders`, a failure an `InstallError`.
@discardableResult
package func makeFolders(_ path: String) throws -> [String] {
    do {
        return try createFolders(path)
    } catch {
        throw InstallError.io(path: error.path, error.reason)
    }
}

/// Opens a folder by path, for the calls that continue relative to it.
func openDirectory(_ path: String) -> Int32 {
    open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
}

/// Puts the folder `staging` in the place of the folder `name` in `dir` (whose path is `path`),
/// and removes the old one. On Linux the two swap in one atomic step (`renameat2(RENAME_EXCHANGE)`),
/// so `name` never goes missing; elsewhere two renames, the old folder kept as `.replacing-*` in
/// between, which `ProductFolder.removeLeftovers` puts back if a run is killed there.
package func replaceFolder(_ name: String, with staging: String, in dir: Int32, path: String) throws {
    #if os(Linux)
    if CSyscalls_exchange(dir, staging, dir, name) == 0 {
        try? removeTree(dir, name: staging)
        return
    }
    guard errno == EINVAL || errno == ENOSYS else { throw InstallError.io(path: path + "/" + name, errnoText()) }
    #endif
    let old = ProductFolder.replacingPrefix + randomSuffix()
    try checkCall(renameat(dir, name, dir, old), path + "/" + old)
    if renameat(dir, staging, dir, name) != 0 {
        let message = errnoText()
        renameat(dir, old, dir, name)
        throw InstallError.io(path: path + "/" + name, message)
    }
    try? removeTree(dir, name: old)
}
