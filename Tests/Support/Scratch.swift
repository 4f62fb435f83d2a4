import Foundation
import PkgKit
#if canImport(Glibc)
import Glibc
#endif

/// A temporary folder for one test, removed (with any tmpfs mounted inside it) when the value
/// goes away.
public final class Scratch: Sendable {
    /// The folder's path.
    public let root: String
    /// The tmpfs mounted inside it, in order.
    private let mounts = LockedValue<[String]>([])

    /// Makes a fresh, empty folder under the system's temporary folder.
    public init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("pkgtool-test-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    }

    deinit {
        for mount in mounts.current.reversed() { Scratch.unmount(mount) }
        Scratch.remove(root)
    }

    /// Removes `folder` and everything in it, however deep: Foundation gives up on a tree whose
    /// paths pass the system's limit (`File name too long`) and leaves it in the temporary
    /// folder, where `rm` (which walks relative to each open folder) does not.
    public static func remove(_ folder: String) {
        try? FileManager.default.removeItem(atPath: folder)
        if exists(folder) { _ = try? CommandRunner.run("/bin/rm", ["-rf", "--", folder]) }
    }

    /// The folder as a URL.
    public var url: URL { URL(fileURLWithPath: root) }

    /// A path inside the folder.
    public func path(_ relative: String) -> String { root + "/" + relative }

    /// `Documents`, the usual install target.
    public var documents: String { path("Documents") }

    /// Writes `contents` to `relative` (folders made), with `mode`; returns the full path.
    @discardableResult
    public func write(_ relative: String, _ contents: Data, mode: Int = 0o644) throws -> String {
        let file = path(relative)
        try FileManager.default.createDirectory(atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try contents.write(to: URL(fileURLWithPath: file))
        guard chmod(file, mode_t(mode)) == 0 else { throw CocoaError(.fileWriteNoPermission) }
        return file
    }

    /// Writes text.
    @discardableResult
    public func write(_ relative: String, _ contents: String, mode: Int = 0o644) throws -> String {
        try write(relative, Data(contents.utf8), mode: mode)
    }

    /// Writes bytes.
    @discardableResult
    public func write(_ relative: String, _ contents: [UInt8], mode: Int = 0o644) throws -> String {
        try write(relative, Data(contents), mode: mode)
    }

    /// Makes a folder (and its parents); returns its path.
    @discardableResult
    public func mkdir(_ relative: String) throws -> String {
        try FileManager.default.createDirectory(atPath: path(relative), withIntermediateDirectories: true)
        return path(relative)
    }

    /// The bytes of a file inside the folder.
    public func read(_ relative: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path(relative))) }

    /// A file's bytes, or nil when it cannot be read.
    public func contents(_ relative: String) -> Data? { FileManager.default.contents(atPath: path(relative)) }

    /// A file's size, or nil when it does not exist.
    public func size(_ relative: String) -> Int64? {
        (try? FileManager.default.attributesOfItem(atPath: path(relative))[.size] as? NSNumber)?.int64Value
    }

    /// A file's text, or nil when it cannot be read.
    public func text(_ relative: String) -> String? {
        (try? read(relative)).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The sorted names in a folder inside this one (empty when it is missing).
    public func list(_ relative: String) -> [String] { names(path(relative)) }

    /// A package source folder: ContentInfo.plist and Contents/ with `files` (text by relative
    /// path) and symbolic `links` (target by relative path); returns its path.
    @discardableResult
    public func content(_ folder: String, id: String = "com.example.test", version: String = "1.0",
                        files: [String: String] = ["a.txt": "hello\n"], links: [String: String] = [:]) throws -> String {
        try write("\(folder)/ContentInfo.plist", plist(id: id, version: version))
        try mkdir("\(folder)/Contents")
        for (name, text) in files { try write("\(folder)/Contents/\(name)", text) }
        for (name, target) in links {
            try FileManager.default.createSymbolicLink(atPath: path("\(folder)/Contents/\(name)"), withDestinationPath: target)
        }
        return path(folder)
    }

    /// Writes `files` (bytes by path below Contents/) into `src-<name>/`, builds `<name>.pkg` from
    /// it with the built `pkgtool create` (`extraArguments` added), and returns the package's path
    /// and the source's Contents/ folder.
    @discardableResult
    public func package(_ name: String, id: String = "com.example.book", version: String, files: [String: Data],
                        extraArguments: [String] = []) throws -> (pkg: String, contents: String) {
        try mkdir("src-" + name + "/Contents")
        for (relative, data) in files { try write("src-\(name)/Contents/\(relative)", data) }
        return try build(name, source: path("src-" + name), id: id, version: version, extraArguments: extraArguments)
    }

    /// Writes the ContentInfo.plist of `source` (whose Contents/ is already filled) and builds
    /// `<name>.pkg` from it with `pkgtool create`.
    @discardableResult
    public func build(_ name: String, source: String, id: String, version: String,
                      extraArguments: [String] = []) throws -> (pkg: String, contents: String) {
        try Data(plist(id: id, version: version).utf8).write(to: URL(fileURLWithPath: source + "/ContentInfo.plist"))
        let output = path(name + ".pkg")
        let result = try CommandRunner.pkgtool(["create", source, "-o", output] + extraArguments)
        guard result.status == 0 else {
            throw CommandRunner.ShellError(command: "pkgtool create \(source)", stderr: result.stdout + result.stderr)
        }
        return (output, source + "/Contents")
    }

    /// `package` with text files.
    @discardableResult
    public func package(_ name: String, id: String = "com.example.book", version: String, text files: [String: String],
                        extraArguments: [String] = []) throws -> String {
        try package(name, id: id, version: version, files: files.mapValues { Data($0.utf8) }, extraArguments: extraArguments).pkg
    }

    /// True when this process may mount file systems (root): tests of a full disk or a read-only
    /// one mount a tmpfs, and are skipped without it (`.enabled(if: Scratch.canMount)`).
    public static var canMount: Bool { getuid() == 0 }

    /// Mounts a fresh tmpfs of `size` (as `mount` reads it: "8m") at `relative`; returns its path.
    public func mountTmpfs(_ relative: String, size: String) throws -> String {
        let point = try mkdir(relative)
        try CommandRunner.shell("mount -t tmpfs -o size=\(size),mode=0755 tmpfs '\(point)'")
        mounts.withLock { $0.append(point) }
        return point
    }

    /// Unmounts (idempotent; lazy when busy).
    public static func unmount(_ point: String) {
        if (try? CommandRunner.run("/bin/umount", [point]))?.status != 0 {
            _ = try? CommandRunner.run("/bin/umount", ["-l", point])
        }
    }
}

/// The sorted names in a folder (empty when it is missing), without the stat caches and chunk
/// indexes kept beside each version folder (`.index-<version>`, `.chunk-index-<version>`): what
/// the tests compare is the layout SPEC section 3 gives, and `StatCacheTests` and
/// `ContentDeltaTests` look at those files themselves.
public func names(_ folder: String) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { !$0.hasPrefix(".index-") && !$0.hasPrefix(".chunk-index-") }.sorted()
}

/// True when something (even a dangling link) is at `path`.
public func exists(_ path: String) -> Bool { access(path, F_OK) == 0 || isLink(path) }

private func isLink(_ path: String) -> Bool {
    var info = stat()
    return lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFLNK
}
