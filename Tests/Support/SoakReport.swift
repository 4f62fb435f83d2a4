import Foundation

/// A run of the soak that broke an invariant: what broke, and what the run met.
public struct SoakViolation: Sendable, CustomStringConvertible {
    /// The run's number (0 first), in the soak of `seed`.
    public var run: Int
    /// The seed that replays the soak.
    public var seed: UInt64
    /// Each invariant broken, one line each.
    public var problems: [String]
    /// What the run was: arguments, faults served, signal, exit status, time, last stderr lines.
    public var context: [String]

    /// The problems, then the context, indented.
    public var description: String {
        (["run \(run) (seed \(seed)): " + problems.joined(separator: "; ")] + context.map { "    " + $0 }).joined(separator: "\n")
    }
}

/// What a soak did and found; `violations` must be empty.
public struct SoakReport: Sendable {
    /// The seed its choices came from.
    public var seed: UInt64
    /// Syncs asked for.
    public var plannedRuns: Int
    /// Syncs run.
    public var runs = 0
    /// True when the time limit stopped it before `plannedRuns`.
    public var stoppedEarly = false
    /// Whether `sync --timeout` existed (then passed on every run).
    public var timeoutFlag: Int?
    /// Versions published during the soak.
    public var versions: [String] = []
    /// Versions whose TOC leaves some files' checksums out.
    public var versionsWithoutChecksums: [String] = []
    /// Installs that sync reported as deltas.
    public var deltaInstalls = 0
    /// Package bytes those deltas downloaded.
    public var deltaBytes = 0
    /// The sizes of their packages, added up.
    public var deltaPackageBytes = 0
    /// Runs that began with an empty Documents folder (a new device).
    public var wipes = 0
    /// Requests answered without a fault.
    public var cleanRequests = 0
    /// Faults served, by kind.
    public var faults: [SoakFault: Int] = [:]
    /// Signals sent as planned, by name (SIGTERM, SIGKILL).
    public var signals: [String: Int] = [:]
    /// Signals planned for runs that ended before their moment came.
    public var signalsNotNeeded = 0
    /// Runs that moved the record to a new version.
    public var installs = 0
    /// Runs that exited 0 with the record as it was.
    public var unchanged = 0
    /// Runs that exited 1.
    public var refusals = 0
    /// Runs that exited 2.
    public var failures = 0
    /// Runs ended by SIGTERM (143).
    public var interrupted = 0
    /// Runs ended by SIGKILL.
    public var killed = 0
    /// Runs the soak had to SIGKILL because they outlived their bound.
    public var hung = 0
    /// Version folders in `Documents/<id>/` at the end.
    public var versionFoldersLeft = 0
    /// Everything else there at the end (record, lock, downloads kept for resuming, leftovers).
    public var leftInProductFolder: [String] = []
    /// Every invariant broken.
    public var violations: [SoakViolation] = []
    /// Seconds from start to end.
    public var wallTime: TimeInterval = 0

    /// True when every planned run ran and no invariant broke.
    public var passed: Bool { violations.isEmpty && !stoppedEarly }

    /// The summary, one topic a line, violations last.
    public var summary: String {
        var lines = ["soak: \(runs) of \(plannedRuns) syncs in \(String(format: "%.1f", wallTime)) s, seed \(seed)"
                     + (stoppedEarly ? " (STOPPED at the time limit)" : "")]
        lines.append("  sync --timeout       " + (timeoutFlag.map { "\($0) s" } ?? "not available in this pkgtool: its default idle timeout; stalls cut at 3 s by the server"))
        lines.append("  versions published   \(versions.count) (\(versions.first ?? "-") … \(versions.last ?? "-")), \(versionsWithoutChecksums.count) with files"
                     + " lacking checksums; Documents emptied \(wipes) times")
        let faultCount = faults.values.reduce(0, +)
        lines.append("  requests             \(cleanRequests + faultCount) answered, \(faultCount) with a fault")
        for (kind, count) in faults.sorted(by: { $0.key < $1.key }) {
            lines.append("    " + kind.rawValue.padding(toLength: 30, withPad: " ", startingAt: 0) + " \(count)")
        }
        lines.append("  signals              SIGTERM \(signals["SIGTERM", default: 0]), SIGKILL \(signals["SIGKILL", default: 0])"
                     + " (\(signalsNotNeeded) more planned for runs that ended first)")
        lines.append("  outcomes             installed \(installs) (\(deltaInstalls) as deltas, fetching"
                     + " \(deltaPackageBytes == 0 ? 0 : deltaBytes * 100 / deltaPackageBytes)% of their packages), unchanged \(unchanged), refused (1) \(refusals), failed (2) \(failures),"
                     + " interrupted (143) \(interrupted), killed \(killed), hung (killed by the soak) \(hung)")
        lines.append("  at the end           \(versionFoldersLeft) version folders, and " + leftInProductFolder.joined(separator: " "))
        lines.append("  violations           \(violations.count)")
        lines += violations.map(\.description)
        return lines.joined(separator: "\n")
    }
}
