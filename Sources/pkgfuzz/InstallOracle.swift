import Foundation
import PkgKit

/// What must hold after any install, whatever the input: nothing outside `Documents/<id>/`, no
/// staging folder left, no stat cache without its version folder, and a record, if present, that
/// names a version folder that exists.
enum InstallOracle {
    /// The first broken promise, in words, or nil when the install kept them all.
    static func violation(workFolder: String, documents: String, report: InstallReport?) -> String? {
        let fm = FileManager.default
        let work = Set((try? fm.contentsOfDirectory(atPath: workFolder)) ?? [])
        guard work.isSubset(of: ["input.pkg", "Documents"]) else { return "written beside Documents: \(work.sorted())" }
        let products = (try? fm.contentsOfDirectory(atPath: documents)) ?? []
        guard products.count <= 1 else { return "more than one product folder: \(products.sorted())" }
        guard let id = products.first else { return nil }
        if let reported = report?.productIdentifier, reported != id, report?.status == .installed {
            return "installed into \(id), the package says \(reported)"
        }
        let product = documents + "/" + id
        guard isFolder(product) else { return "\(id) is not a folder" }
        let names = (try? fm.contentsOfDirectory(atPath: product)) ?? []
        for name in names {
            if name.hasPrefix(".staging-") || name.hasPrefix(".old-") || name.hasPrefix(".replacing-") {
                return "leftover \(name)"
            }
            // A version's stat cache and chunk index stand beside its folder, and only beside it.
            if let prefix = [".index-", ".chunk-index-"].first(where: name.hasPrefix) {
                guard isFolder(product + "/" + name.dropFirst(prefix.count)) else { return "\(name) without its version" }
                continue
            }
            guard name == Installer.lockName || name == Installer.recordName || isFolder(product + "/" + name) else {
                return "unexpected \(name) in the product folder"
            }
        }
        guard names.contains(Installer.recordName) else {
            // No record: nothing may have been installed.
            return names.contains { $0 != Installer.lockName } ? "version folders without a record: \(names.sorted())" : nil
        }
        guard let data = fm.contents(atPath: product + "/" + Installer.recordName),
              let record = (try? PropertyListSerialization.propertyList(from: data, format: nil)) as? [String: Any],
              let version = record["ContentVersion"] as? String else { return "the record does not parse" }
        guard names.contains(version), isFolder(product + "/" + version) else { return "the record names \(version), which is not a folder" }
        return nil
    }

    private static func isFolder(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
    }
}
