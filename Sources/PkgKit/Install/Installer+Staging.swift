#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Crypto
import Foundation

extension Installer {
    /// Streams the package a second time and writes the tree below `Contents/` into `name`.
    func stage(_ packagePath: String, facts: PackageFacts, expected: [String: String], limits: PackageLimits,
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
    func digests(of product: Int32, name: String, path: String) throws -> [String: String] {
        let fd = openat(product, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw InstallError.io(path: path, errnoText()) }
        defer { close(fd) }
        var result: [String: String] = [:]
        try collectDigests(fd, prefix: "", path: path, into: &result)
        return result
    }

    func collectDigests(_ dir: Int32, prefix: String, path: String, into result: inout [String: String]) throws {
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
