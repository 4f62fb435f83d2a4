import Crypto
import Foundation

/// What an installed version folder holds, read from the folder itself (no manifest is kept), never
/// following a link: the basis of "same files" for extract and of the reuse plan of a delta update.
struct InstalledTree {
    /// A regular file, hashed.
    struct File: Sendable {
        /// Its path below the version folder.
        var relativePath: String
        var identity: FileIdentity
        /// Lowercase hex sha1 of its bytes.
        var sha1: String
        /// Machine code or script found in its first bytes.
        var executable: ExecutableFormat?
    }

    /// Regular files that were hashed.
    var files: [File] = []
    /// sha1 of each file and `link:` + target of each link, by path below the version folder
    /// (`special` for anything else): what `PayloadDigests` gives for a package.
    var digests: [String: String] = [:]

    /// Who every regular file is on disk, by path below the version folder.
    var identities: [String: FileIdentity] = [:]

    /// Reads the version folder `name` of `product`. A file that `cache` still describes (same
    /// identity) is taken from it; of the others, only those for which `hashing` returns true
    /// (given their size) are read and hashed. Files neither cached nor hashed appear in neither
    /// list (but in `identities`).
    static func scan(_ product: ProductFolder, version name: String, cache: StatCache? = nil,
                     hashing: (Int64) -> Bool = { _ in true }) throws -> InstalledTree {
        let fd = openat(product.descriptor, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw InstallError.io(path: product.path(name), errnoText()) }
        defer { close(fd) }
        var tree = InstalledTree()
        try tree.collect(fd, prefix: "", path: product.path(name), cache: cache, hashing: hashing)
        return tree
    }

    /// Who every regular file of version folder `name` is, read without hashing anything.
    static func identities(_ product: ProductFolder, version name: String) throws -> [String: FileIdentity] {
        try scan(product, version: name, hashing: { _ in false }).identities
    }

    /// Hashing takes one thread per core (at most this many), a folder at a time: a delta sync
    /// reads every installed file it might reuse, and sha1 on one thread would be most of its time.
    static let maxJobs = 4

    private mutating func collect(_ dir: Int32, prefix: String, path: String, cache: StatCache?, hashing: (Int64) -> Bool) throws {
        var entries: [(name: String, info: stat)] = []
        for name in try listNames(dir, path: path) {
            var info = stat()
            guard fstatat(dir, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { throw InstallError.io(path: path + "/" + name, errnoText()) }
            entries.append((name, info))
        }
        // What the cache still describes is taken from it; the rest of the folder's files are
        // hashed on every core while `dir` stays open, and taken in order.
        var hashed: [Int: Hashed] = [:]
        for index in entries.indices where entries[index].info.st_mode & S_IFMT == S_IFREG {
            let identity = FileIdentity(entries[index].info)
            identities[prefix + entries[index].name] = identity
            if let known = cache?.entry(prefix + entries[index].name, matching: identity) {
                hashed[index] = Hashed(sha1: known.sha1, executable: known.executable, identity: identity)
            }
        }
        let wanted = entries.indices.filter {
            entries[$0].info.st_mode & S_IFMT == S_IFREG && hashed[$0] == nil && hashing(Int64(entries[$0].info.st_size))
        }
        let names = wanted.map { entries[$0].name }
        let jobs = min(Self.maxJobs, ProcessInfo.processInfo.activeProcessorCount, names.count)
        try OrderedWorkPool.run(count: names.count, jobs: jobs, window: 64, work: { index in
            try Self.hash(dir, names[index], path: path + "/" + names[index])
        }, consume: { index, file in
            hashed[wanted[index]] = file
        })
        for (index, entry) in entries.enumerated() {
            let relative = prefix + entry.name
            switch entry.info.st_mode & S_IFMT {
            case S_IFDIR:
                let child = openat(dir, entry.name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                guard child >= 0 else { throw InstallError.io(path: path + "/" + entry.name, errnoText()) }
                defer { close(child) }
                try collect(child, prefix: relative + "/", path: path + "/" + entry.name, cache: cache, hashing: hashing)
            case S_IFLNK:
                var target = [UInt8](repeating: 0, count: 4097)
                let count = readlinkat(dir, entry.name, &target, target.count - 1)
                guard count >= 0 else { throw InstallError.io(path: path + "/" + entry.name, errnoText()) }
                digests[relative] = "link:" + String(decoding: target[0..<count], as: UTF8.self)
            case S_IFREG:
                guard let file = hashed[index] else { continue }
                files.append(File(relativePath: relative, identity: file.identity, sha1: file.sha1, executable: file.executable))
                digests[relative] = file.sha1
            default:
                digests[relative] = "special"
            }
        }
    }

    /// What reading a file once tells.
    struct Hashed: Sendable {
        var sha1: String
        var executable: ExecutableFormat?
        var identity: FileIdentity
    }

    /// Reads a file once: its sha1, what its first bytes are, and who it was while it was read.
    static func hash(_ dir: Int32, _ name: String, path: String) throws -> Hashed {
        let file = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard file >= 0 else { throw InstallError.io(path: path, errnoText()) }
        defer { close(file) }
        var info = stat()
        guard fstat(file, &info) == 0 else { throw InstallError.io(path: path, errnoText()) }
        // Most files are small: a buffer their size (at most 1 MiB) costs no mapping of its own.
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Int(min(max(Int64(info.st_size) + 1, 4096), 1 << 20)),
                                                            alignment: 16)
        defer { buffer.deallocate() }
        var sha1 = Insecure.SHA1()
        var head: [UInt8] = []
        while true {
            let count = readRetrying(file, buffer)
            guard count >= 0 else { throw InstallError.io(path: path, errnoText()) }
            if count == 0 { break }
            let chunk = UnsafeRawBufferPointer(rebasing: buffer[0..<count])
            if head.count < ExecutableFormat.headBytes { head += chunk.prefix(ExecutableFormat.headBytes - head.count) }
            sha1.update(bufferPointer: chunk)
        }
        guard fstat(file, &info) == 0 else { throw InstallError.io(path: path, errnoText()) }
        return Hashed(sha1: sha1.finalize().hexString, executable: ExecutableFormat.detect(head), identity: FileIdentity(info))
    }
}
