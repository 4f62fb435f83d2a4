import Foundation
import PkgKitSupport
import PkgKitCatalog

/// `DIR/signatures/`: the signature file of every recent catalog, named by its digest, and the
/// record of the order publish wrote them in (`SignatureHistory`).
///
/// Files are written before the catalog they sign replaces the old one, and old ones deleted
/// only after, so that the folder always holds the signature of the catalog it serves, and of
/// the catalogs a cache may still serve in its place.
package struct SignatureFolder: Sendable {
    /// `DIR/signatures`.
    package let path: String

    /// The signature folder of the published folder `destination`.
    package init(destination: String) {
        path = destination + "/" + CatalogSignature.folderName
    }

    /// `DIR/signatures/<digest>.sig`.
    package func filePath(_ digest: String) -> String { path + "/" + digest + ".sig" }

    /// The signature file of the catalog with `digest`, or nil when there is none.
    package func read(_ digest: String) throws(PublishError) -> Data? {
        try PublishedFile.read(filePath(digest), limit: CatalogSignature.maximumBytes + 1)
    }

    /// Writes each file whose contents on disk differ, in the order given; returns the digests
    /// written.
    package func write(_ files: [(digest: String, contents: Data)]) throws(PublishError) -> [String] {
        var written: [String] = []
        for file in files where try read(file.digest) != file.contents {
            try makeOutputFolders(path)
            try PublishedFile.write(file.contents, to: filePath(file.digest))
            written.append(file.digest)
        }
        return written
    }

    /// Records the order after this run (`written`, then the published catalog's `current`, the
    /// newest) before the catalog is replaced, and returns the files beyond the newest
    /// `SignatureHistory.kept`, to delete once it is; `recorded` says whether the record changed.
    package func record(written: [String], current: String) throws(PublishError) -> (recorded: Bool, removed: [String]) {
        let recordPath = path + "/" + SignatureHistory.fileName
        let before = try PublishedFile.read(recordPath, limit: 1 << 20)
        let (history, removed) = SignatureHistory(recorded: before).updated(present: try present(), written: written, current: current)
        guard history.contents != (before ?? Data()) else { return (false, removed) }
        try makeOutputFolders(path)
        try PublishedFile.write(history.contents, to: recordPath)
        return (true, removed)
    }

    /// Deletes the signature files of `digests`.
    package func remove(_ digests: [String]) throws(PublishError) {
        for digest in digests where unlink(filePath(digest)) != 0 && errno != ENOENT {
            throw PublishError(path: filePath(digest), "cannot remove: \(errnoText())")
        }
    }

    /// The signature files in the folder, with their modification times; other files are not
    /// publish's and are left alone.
    private func present() throws(PublishError) -> [(digest: String, modified: Double)] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: path)
        } catch {
            if access(path, F_OK) != 0 && errno == ENOENT { return [] }
            throw PublishError(path: path, "cannot list: \(errnoText())")
        }
        return names.filter(CatalogSignature.isSignatureFileName).map { name in
            var info = stat()
            guard stat(path + "/" + name, &info) == 0 else { return (String(name.dropLast(4)), 0) }
            #if canImport(Darwin)
            let time = info.st_mtimespec
            #else
            let time = info.st_mtim
            #endif
            return (String(name.dropLast(4)), Double(time.tv_sec) + Double(time.tv_nsec) / 1e9)
        }
    }
}
