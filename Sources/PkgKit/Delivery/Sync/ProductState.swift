import Foundation
import PkgKitIdentity
import PkgKitInstall
import PkgKitCatalog

/// What Documents holds of one product, read before its sync is planned: the version the record
/// names, whether its folder is there, and the bytes an earlier run downloaded of the catalog's
/// latest entry. Read through the product folder a sync holds locked, so that the plan made from
/// it stays true while it is carried out.
struct ProductState: Sendable, Equatable {
    /// The version the record names.
    var installedVersion: String?
    /// The folder of that version (it may spell the version differently: `1.0.0` for `1.0`).
    var installedFolder: String?
    /// Bytes in the `.part` of `entry`, when one was started for this very entry.
    var partialBytes: Int64 = 0

    /// Nothing installed, nothing downloaded.
    package static let empty = ProductState()

    /// Reads `folder` (nil: no product folder yet), with `entry` the catalog's latest entry.
    package static func read(_ folder: ProductFolder?, latest entry: CatalogVersion?) throws -> ProductState {
        guard let folder else { return .empty }
        var state = ProductState()
        state.installedVersion = folder.recordVersion()
        if let installed = state.installedVersion.flatMap(ContentVersion.init) {
            state.installedFolder = try folder.folder(for: installed)
        }
        if let entry {
            let part = DownloadNote.partName(entry)
            if DownloadNote.matches(entry, in: folder) { state.partialBytes = fileSize(folder.path(part)) ?? 0 }
        }
        return state
    }

    private static func fileSize(_ path: String) -> Int64? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value
    }
}

/// The note beside a `.part` that says which catalog entry it is a download of: a download is
/// resumed only for the same entry (same size and sha256), never mixed with another's bytes.
enum DownloadNote {
    /// The `.part` of `entry` in its product folder.
    static func partName(_ entry: CatalogVersion) -> String { ProductFolder.downloadName(entry.contentVersion.description) }

    /// The note's name beside it.
    static func noteName(_ entry: CatalogVersion) -> String { partName(entry) + ".entry" }

    private static func contents(_ entry: CatalogVersion) -> Data {
        Data("\(entry.sha256.lowercased()) \(entry.size)\n".utf8)
    }

    /// True when the note says the `.part` is a download of `entry`.
    package static func matches(_ entry: CatalogVersion, in folder: ProductFolder) -> Bool {
        FileManager.default.contents(atPath: folder.path(noteName(entry))) == contents(entry)
    }

    /// Makes the `.part` a download of `entry`: a `.part` of another entry goes, the note is written.
    package static func claim(_ entry: CatalogVersion, in folder: ProductFolder) throws {
        guard !matches(entry, in: folder) else { return }
        try? folder.remove(partName(entry))
        let path = folder.path(noteName(entry))
        do {
            try contents(entry).write(to: URL(fileURLWithPath: path))
        } catch {
            throw InstallError.io(path: path, "cannot write: \(error.localizedDescription)")
        }
    }

    /// Removes the `.part` and its note: installed, or not the catalog's bytes.
    package static func discard(_ entry: CatalogVersion, in folder: ProductFolder) {
        try? folder.remove(partName(entry))
        try? folder.remove(noteName(entry))
    }
}
