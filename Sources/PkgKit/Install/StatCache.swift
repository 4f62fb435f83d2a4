import Crypto
import Foundation

/// What an install knew of each file it wrote, kept beside the version folder as
/// `DIR/<id>/.index-<version>`: the file's sha1 (from the package's verified TOC) and who the file
/// was on disk right after the install (device, inode, mode, size, and mtime and ctime in
/// nanoseconds). A delta sync takes a file's sha1 from here instead of reading it again, as git's
/// index does, but only while the file is still exactly who it was: writing a file changes its
/// ctime, which no one can set back, so an edited file never matches and is read and hashed.
///
/// Two guards keep that promise: an entry whose ctime or mtime falls within `racyMargin` of the
/// moment the cache is written is left out (file times come from a clock that advances in ticks,
/// and an edit in the same tick as the install could leave them unchanged: git's "racy" entries),
/// and the whole file carries its own sha256, so a cache damaged by a crash is ignored whole.
struct StatCache: Sendable {
    /// One file's sha1, first bytes' verdict, and identity.
    struct Entry: Sendable, Equatable {
        var sha1: String
        var executable: ExecutableFormat?
        var identity: FileIdentity
    }

    /// Entries by path below the version folder.
    var entries: [String: Entry] = [:]

    /// How close to the cache's writing a file's times may be and the file still be trusted: far
    /// above any file system's timestamp tick (a jiffy: 1–10 ms).
    static let racyMargin: Int64 = 100_000_000

    private static let magic = "pkgtool-stat-cache 1"

    /// The cache's name for version folder `version`.
    static func fileName(_ version: String) -> String { prefix + version }
    private static let prefix = ".index-"

    /// The entry for `path` when `identity` is still the file's.
    func entry(_ path: String, matching identity: FileIdentity) -> Entry? {
        guard let entry = entries[path], entry.identity == identity else { return nil }
        return entry
    }

    /// The cache of version folder `version` in `product`; nil when there is none or it does not
    /// read whole (every defect, a damaged file included, means "no cache").
    static func read(_ product: ProductFolder, version: String) -> StatCache? {
        guard let data = FileManager.default.contents(atPath: product.path(fileName(version))),
              let text = String(data: data, encoding: .utf8) else { return nil }
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.first == Substring(magic), lines.last == "", lines.count >= 3 else { return nil }
        lines.removeLast()
        let trailer = lines.removeLast()
        let body = lines.joined(separator: "\n") + "\n"
        guard trailer == "end " + SHA256.hash(data: Data(body.utf8)).hexString else { return nil }
        var cache = StatCache()
        for line in lines.dropFirst() {
            let fields = line.split(separator: "\t", maxSplits: 8, omittingEmptySubsequences: false)
            guard fields.count == 9, let device = UInt64(fields[2]), let inode = UInt64(fields[3]), let mode = UInt32(fields[4]),
                  let size = Int64(fields[5]), let modified = Int64(fields[6]), let changed = Int64(fields[7]) else { return nil }
            let executable = fields[1] == "-" ? nil : ExecutableFormat(rawValue: String(fields[1]))
            cache.entries[String(fields[8])] = Entry(sha1: String(fields[0]), executable: executable,
                                                     identity: FileIdentity(device: device, inode: inode, mode: mode, size: size,
                                                                            modified: modified, changed: changed))
        }
        return cache
    }

    /// Writes the cache of version folder `version` in `product` for `files` (sha1 and first bytes'
    /// verdict by path), each paired with its identity on disk now; a file whose identity cannot
    /// be had, or whose times are within `racyMargin` of `now` (nanoseconds since 1970; the
    /// clock's, unless a test says), is left out. Never fails an install: a cache that cannot be
    /// written is only a slower next delta.
    static func write(_ product: ProductFolder, version: String, files: [String: (sha1: String, executable: ExecutableFormat?)],
                      now: Int64? = nil) {
        guard let identities = try? InstalledTree.identities(product, version: version) else { return }
        let written = now ?? Int64(Date().timeIntervalSince1970 * 1e9)
        var body = magic + "\n"
        for (path, file) in files.sorted(by: { $0.key < $1.key }) {
            guard let identity = identities[path],
                  identity.changed < written - racyMargin, identity.modified < written - racyMargin else { continue }
            body += [file.sha1, file.executable?.rawValue ?? "-", String(identity.device), String(identity.inode), String(identity.mode),
                     String(identity.size), String(identity.modified), String(identity.changed), path].joined(separator: "\t") + "\n"
        }
        body += "end " + SHA256.hash(data: Data(body.utf8)).hexString + "\n"
        let name = fileName(version), temporary = name + ".tmp-" + randomSuffix()
        do {
            try Data(body.utf8).write(to: URL(fileURLWithPath: product.path(temporary)))
            try product.rename(temporary, to: name)
        } catch {
            try? product.remove(temporary)
        }
    }

    /// True for a stat cache (or a half-written one) whose version folder is not among `versions`.
    static func isLeftover(_ name: String, versions: Set<String>) -> Bool {
        guard name.hasPrefix(prefix) else { return false }
        let version = name.dropFirst(prefix.count)
        return version.contains(".tmp-") || !versions.contains(String(version))
    }

    /// Removes the cache of version folder `version`, if any.
    static func remove(_ product: ProductFolder, version: String) {
        try? product.remove(fileName(version))
    }
}
