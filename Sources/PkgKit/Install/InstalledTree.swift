import Crypto
import Foundation
import PkgKitSupport
import PkgKitFormat
internal import CSyscalls

/// What an installed version folder holds, read from the folder itself (no manifest is kept), never
/// following a link: the basis of "same files" for extract and of the reuse plan of a delta update.
package struct InstalledTree {
    /// The version folder read, a name inside the product folder.
    package let version: String
    /// Regular files that were hashed.
    package var files: [InstalledFile] = []
    /// `link:` + target of each link, and `special` for anything neither a file nor a folder, by
    /// path below the version folder.
    private var others: [String: String] = [:]

    /// sha1 (lowercase hex) of each file and `link:` + target of each link, by path below the
    /// version folder (`special` for anything else): what `PayloadDigests` gives for a package.
    /// Spelled out only when asked: a delta plan needs only `files`.
    package var digests: [String: String] {
        var digests = others
        for file in files { digests[file.relativePath] = file.sha1.hexString }
        return digests
    }

    /// Regular files that `hashing` declined (their sha1 is not in the cache either), with who they
    /// are on disk: a delta hashes them later in the read that cuts them into chunks (`ChunkIndex`).
    package private(set) var unhashed: [(relativePath: String, identity: FileIdentity)] = []

    /// Who every regular file is on disk, by path below the version folder (gathered only by
    /// `identities(_:version:)`: a delta plan does not need them).
    package private(set) var identities: [String: FileIdentity] = [:]
    private var recordsIdentities = false

    /// Reads the version folder `name` of `product`. A file that `cache` still describes (same
    /// identity) is taken from it; of the others, only those for which `hashing` returns true
    /// (given their size) are read and hashed. Files neither cached nor hashed appear in neither
    /// list (but in `unhashed` and `identities(_:version:)`).
    package static func scan(_ product: ProductFolder, version name: String, cache: StatCache? = nil,
                     hashing: (Int64) -> Bool = { _ in true }) throws -> InstalledTree {
        try scan(product, version: name, cache: cache, hashing: hashing, identities: false)
    }

    private static func scan(_ product: ProductFolder, version name: String, cache: StatCache?,
                             hashing: (Int64) -> Bool, identities: Bool) throws -> InstalledTree {
        let fd = openat(product.descriptor, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw InstallError.io(path: product.path(name), errnoText()) }
        defer { close(fd) }
        var tree = InstalledTree(version: name)
        tree.recordsIdentities = identities
        try tree.collect(fd, prefix: "", path: product.path(name), cache: cache, hashing: hashing)
        return tree
    }

    /// Who every regular file of version folder `name` is, read without hashing anything.
    static func identities(_ product: ProductFolder, version name: String) throws -> [String: FileIdentity] {
        try scan(product, version: name, cache: nil, hashing: { _ in false }, identities: true).identities
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
        let relatives = entries.map { prefix + $0.name }
        var hashed = [Hashed?](repeating: nil, count: entries.count)
        for index in entries.indices where entries[index].info.st_mode & S_IFMT == S_IFREG {
            let identity = FileIdentity(entries[index].info)
            if recordsIdentities { identities[relatives[index]] = identity }
            if let known = cache?.entry(relatives[index], matching: identity) {
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
            let relative = relatives[index]
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
                others[relative] = "link:" + String(decoding: target[0..<count], as: UTF8.self)
            case S_IFREG:
                guard let file = hashed[index] else {
                    unhashed.append((relative, FileIdentity(entry.info)))
                    continue
                }
                files.append(InstalledFile(version: version, relativePath: relative, identity: file.identity, sha1: file.sha1,
                                           executable: file.executable))
            default:
                others[relative] = "special"
            }
        }
    }

    /// Adds a file of the version folder hashed after the scan (one of `unhashed`).
    package mutating func add(_ relativePath: String, _ file: Hashed) {
        files.append(InstalledFile(version: version, relativePath: relativePath, identity: file.identity, sha1: file.sha1,
                                   executable: file.executable))
    }

    /// Adds the files of `unhashed` that were hashed after the scan, in path order, and leaves
    /// `unhashed` empty: a file hashed neither now nor then changed under the read.
    package mutating func addHashed(_ hashed: [String: Hashed]) {
        for (path, file) in hashed.sorted(by: { $0.key < $1.key }) { add(path, file) }
        unhashed = []
    }

    /// What reading a file once tells.
    package struct Hashed: Sendable {
        package var sha1: SHA1Value
        package var executable: ExecutableFormat?
        package var identity: FileIdentity
    }

    /// Reads a file once: its sha1, what its first bytes are, and who it was while it was read.
    package static func hash(_ dir: Int32, _ name: String, path: String) throws -> Hashed {
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
        return Hashed(sha1: SHA1Value(sha1.finalize()), executable: ExecutableFormat.detect(head), identity: FileIdentity(info))
    }
}
