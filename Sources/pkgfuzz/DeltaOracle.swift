import Foundation
import PkgKit

/// What must hold after a sync from 1.0 to 1.1, whatever the server did: the record names 1.1
/// and 1.1's folder is byte for byte a whole install of the published package, or the record
/// still names 1.0 and 1.0 is intact; the sync's status says which; nothing half done is left.
struct DeltaOracle {
    /// `Documents/<id>`.
    var productFolder: String
    /// 1.0 as installed before the sync.
    var previous: InstalledSnapshot
    /// 1.1 as a whole install of the published package leaves it; nil when that is refused.
    var reference: InstalledSnapshot?

    /// Names allowed in the product folder afterwards, beside the version folders (each
    /// version's stat cache and chunk index).
    private static let allowed: Set<String> = [".lock", "ContentInfo.plist", ".index-1.0", ".index-1.1", ".chunk-index-1.0", ".chunk-index-1.1"]

    /// The first broken promise, in words, or nil.
    func violation(_ result: ProductSyncResult?) -> String? {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: productFolder)) ?? []
        for name in names where !Self.allowed.contains(name) && name != "1.0" && name != "1.1" {
            // A whole download that failed is kept for the next run to resume.
            if name.hasPrefix(".download-1.1") { continue }
            return "left \(name) in the product folder (status \(result?.status.rawValue ?? "none"))"
        }
        guard let data = FileManager.default.contents(atPath: productFolder + "/ContentInfo.plist"),
              let record = (try? PropertyListSerialization.propertyList(from: data, format: nil)) as? [String: Any],
              let version = record["ContentVersion"] as? String else { return "the record is gone or does not parse" }
        let status = result?.status
        switch version {
        case "1.1":
            guard status == .installed else { return "the record names 1.1, the sync says \(status?.rawValue ?? "nothing")" }
            guard let reference else { return "installed 1.1, which a whole install of the same package refuses" }
            guard let installed = InstalledSnapshot(productFolder + "/1.1") else { return "the record names 1.1, which is not a folder" }
            let differences = installed.differences(from: reference)
            if !differences.isEmpty { return "installed 1.1 is not the published package: " + differences.joined(separator: "; ") }
            if let kept = InstalledSnapshot(productFolder + "/1.0"), kept != previous {
                return "1.0 changed under the update: " + kept.differences(from: previous).joined(separator: "; ")
            }
        case "1.0":
            if status == .installed { return "the sync says installed, the record still names 1.0" }
            guard let kept = InstalledSnapshot(productFolder + "/1.0") else { return "1.0's folder is gone" }
            if kept != previous { return "1.0 is not intact: " + kept.differences(from: previous).joined(separator: "; ") }
            if names.contains("1.1") { return "a folder 1.1 beside a record naming 1.0" }
        default:
            return "the record names \(version)"
        }
        return nil
    }
}
