import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The invariants every run of the soak must keep, from SPEC section 7 (and section 3's
/// extract, whose install sync shares). Each broken one is a line.
struct SoakCheck {
    var setting: SoakSetting
    var product: SoakProduct
    var options: SoakOptions

    /// Names of work in progress that a run may leave only when it was killed.
    static let leftoverPrefixes = [".staging-", ".old-", ".replacing-", ".delta-", ".ContentInfo.plist.tmp-"]

    func problems(_ run: SoakObservation) -> [String] {
        var problems: [String] = []
        if let forced = run.forced { problems.append("hung: " + forced) }
        problems += timing(run) + status(run) + record(run) + containment(run) + parts(run) + leftovers(run)
        return problems
    }

    /// SIGTERM ends it within the grace; without a signal it ends within its bound.
    private func timing(_ run: SoakObservation) -> [String] {
        guard run.forced == nil else { return [] }
        if let signal = run.signal, signal.name == "SIGTERM", let after = run.endedAfterSignal,
           after > options.signalGrace + options.slack {
            return [String(format: "ended %.2f s after SIGTERM (SPEC: within %.0f s)", after, options.signalGrace)]
        }
        return []
    }

    /// The exit status is one the SPEC allows for the faults met and the signal sent, and says
    /// what happened to the record; `--json` printed one JSON document.
    private func status(_ run: SoakObservation) -> [String] {
        guard run.forced == nil, run.ended else { return [] }
        var allowed: Set<Int32> = run.faults.isEmpty ? [0] : run.faults.reduce(into: []) { $0.formUnion($1.kind.allowedStatuses) }
        // A signal may land after the work is done: the run then ends as it would have.
        switch run.signal?.name {
        case "SIGTERM": allowed.formUnion([143, -SIGTERM])  // -15: before sync listens for it
        case "SIGKILL": allowed.insert(-SIGKILL)
        default: break
        }
        var problems: [String] = []
        if !allowed.contains(run.status) {
            let met = run.faults.isEmpty ? "no fault" : Set(run.faults.map(\.kind.rawValue)).sorted().joined(separator: ", ")
            problems.append("exit \(run.status), where SPEC allows \(allowed.sorted()) for \(met)\(run.signal.map { " and " + $0.name } ?? "")")
        }
        if [0, 1, 2].contains(run.status),
           (try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8))) as? [String: Any] == nil {
            problems.append("--json printed no JSON document on exit \(run.status)")
        }
        return problems
    }

    /// The record names the previous version or the latest, complete and byte-identical to
    /// its reference extract; exit 0 means the latest, 1 and 2 mean nothing was installed.
    private func record(_ run: SoakObservation) -> [String] {
        let recordPath = run.productFolder + "/ContentInfo.plist"
        guard let record = readRecord(run.productFolder) else {
            if exists(recordPath) { return ["the record does not parse"] }
            return run.previous.map { ["the record of \($0) is gone"] } ?? []
        }
        var problems: [String] = []
        if record.id != SoakProduct.identifier { problems.append("the record names product \(record.id)") }
        guard record.version == run.previous || record.version == run.latest.version, let version = product.version(record.version) else {
            return problems + ["the record names \(record.version): neither the previous (\(run.previous ?? "none")) nor the latest (\(run.latest.version))"]
        }
        let mismatches = differences(run.productFolder + "/" + record.version, expected: version.reference)
        if !mismatches.isEmpty {
            problems.append("the record names \(record.version), whose folder is not the reference extract: " + mismatches.joined(separator: ", "))
        }
        if run.status == 0 && run.forced == nil && record.version != run.latest.version {
            problems.append("exit 0, yet the record names \(record.version), not the latest \(run.latest.version)")
        }
        if (run.status == 1 || run.status == 2) && record.version != run.previous {
            problems.append("exit \(run.status) (nothing installed), yet the record moved from \(run.previous ?? "none") to \(record.version)")
        }
        return problems
    }

    /// Nothing outside `Documents/<id>/`: not in Documents, the working folder or TMPDIR.
    private func containment(_ run: SoakObservation) -> [String] {
        var problems: [String] = []
        let strays = names(setting.documents).filter { $0 != SoakProduct.identifier }
        if !strays.isEmpty { problems.append("created outside Documents/\(SoakProduct.identifier)/: " + strays.joined(separator: ", ")) }
        for (folder, label) in [(setting.workingDirectory, "its working folder"), (setting.temporary, "TMPDIR")] {
            let found = names(folder)
            if !found.isEmpty {
                problems.append("created in \(label): " + found.joined(separator: ", "))
                for name in found { try? FileManager.default.removeItem(atPath: folder + "/" + name) }
            }
        }
        return problems
    }

    /// No `.download-<v>.part` (nor a delta's `.delta-<v>.part`) larger than v's package.
    private func parts(_ run: SoakObservation) -> [String] {
        var problems: [String] = []
        for name in names(run.productFolder) where name.hasSuffix(".part") {
            let prefix = name.hasPrefix(".download-") ? ".download-" : name.hasPrefix(".delta-") ? ".delta-" : nil
            guard let prefix else { continue }
            let versionName = String(name.dropFirst(prefix.count).dropLast(".part".count))
            var info = stat()
            guard lstat(run.productFolder + "/" + name, &info) == 0 else { continue }
            guard let version = product.version(versionName) else {
                problems.append("\(name): a download of a version never published")
                continue
            }
            if Int(info.st_size) > version.size {
                problems.append("\(name) holds \(info.st_size) bytes, more than its package's \(version.size)")
            }
        }
        return problems
    }

    /// Work in progress that this run began is gone unless the run was killed: SIGTERM removes
    /// its staging folder (SPEC section 3), a run that ends by itself leaves nothing.
    private func leftovers(_ run: SoakObservation) -> [String] {
        guard run.status != -SIGKILL, run.ended else { return [] }
        let before = Set(run.namesBefore)
        let left = names(run.productFolder).filter { name in
            !before.contains(name) && Self.leftoverPrefixes.contains { name.hasPrefix($0) }
        }
        return left.isEmpty ? [] : ["left \(left.joined(separator: ", ")) after exit \(run.status)"]
    }
}
