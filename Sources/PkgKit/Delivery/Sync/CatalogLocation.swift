import Foundation
import PkgKitSupport
import PkgKitFormat
import PkgKitInstall
import PkgKitCatalog

/// Where a catalog is, from what a user typed (`sync SOURCE`).
public enum CatalogLocation {
    /// Why `SOURCE` names no catalog.
    public enum Problem: Error, Sendable, Equatable, CustomStringConvertible {
        /// Not an http(s) or file URL, nor a path.
        case unsupported(String)
        /// A package file: installing one is `extract`'s work.
        case package(String)

        /// What is wrong and what to do.
        public var description: String {
            switch self {
            case .unsupported(let source):
                return "\(source): only http://, https:// and file:// URLs or a local published folder or catalog.json are supported"
            case .package(let source):
                return "\(source) is a package, not a catalog: install a package file with Installer; sync reads a published catalog"
            }
        }
    }

    /// The catalog's URL for `source` (docs/sync.md): an `http(s)://` URL whose path ends in
    /// `.json` as it is, any other names the published folder (with or without a trailing
    /// slash) and gets `catalog.json` added; a `file://` URL or a local path likewise, where a
    /// folder means the `catalog.json` in it. Relative paths count from `directory`. A package
    /// (a `.pkg` URL, or a local file that is one) is `.package`.
    public static func url(for source: String,
                           relativeTo directory: String = FileManager.default.currentDirectoryPath) throws(Problem) -> URL {
        let lowered = source.lowercased()
        if lowered.hasPrefix("http://") || lowered.hasPrefix("https://") {
            guard let url = URL(string: source), !(url.host ?? "").isEmpty else { throw .unsupported(source) }
            let path = url.path.lowercased()
            if path.hasSuffix(".pkg") { throw .package(source) }
            if path.hasSuffix(".json") { return url }
            return url.appendingPathComponent(Catalog.fileName)
        }
        var path = source
        if lowered.hasPrefix("file://") {
            guard let url = URL(string: source), url.isFileURL else { throw .unsupported(source) }
            path = url.path
        } else if let colon = source.firstIndex(of: ":"), source[..<colon].allSatisfy({ $0.isLetter }),
                  source.distance(from: source.startIndex, to: colon) > 1 {
            throw .unsupported(source)
        }
        if !path.hasPrefix("/") { path = (directory.hasSuffix("/") ? directory : directory + "/") + path }
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue {
            return URL(fileURLWithPath: path, isDirectory: true).appendingPathComponent(Catalog.fileName)
        }
        if path.lowercased().hasSuffix(".pkg") || isPackage(path) { throw .package(source) }
        return URL(fileURLWithPath: path, isDirectory: false)
    }

    /// True when the file at `path` starts like a package container (xar, zip or tar).
    private static func isPackage(_ path: String) -> Bool {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var head = [UInt8](repeating: 0, count: ContainerSignature.headBytes)
        let count = head.withUnsafeMutableBytes { readFully(fd, $0, at: 0) }
        return count > 0 && ContainerSignature.detect(Array(head[0 ..< count])) != nil
    }
}
