#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Crypto
import Foundation

extension Installer {
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
