import ArgumentParser
import PkgKitDiagnostics
import PkgKit

/// An exit status of docs/exit-codes.md, and the one place where what a command ends with becomes
/// one: every report and every error says how its work ended as an `Outcome` (an error by its
/// disposition), and `init(_:)` maps that; the numbers are the command line's.
struct ExitStatus: Hashable, Sendable, CustomStringConvertible {
    /// The number the process exits with.
    let code: Int32

    /// 0: the work was done (warnings allowed unless `--strict`).
    static let success = ExitStatus(code: 0)
    /// 1: a package is invalid, or the operation was refused.
    static let refused = ExitStatus(code: 1)
    /// 2: the work could not be done (input missing or unreadable, I/O error, disk full).
    static let failed = ExitStatus(code: 2)
    /// 3: `sync --check` only: updates are available.
    static let updatesAvailable = ExitStatus(code: 3)
    /// 64: wrong usage.
    static let usage = ExitStatus(code: ExitCode.validationFailure.rawValue)

    /// 128 + the signal that stopped the work: 130 for SIGINT, 143 for SIGTERM.
    static func interrupted(by signal: Int32) -> ExitStatus { ExitStatus(code: 128 + signal) }

    private init(code: Int32) { self.code = code }

    /// The status a run ends with when its work ended with `outcome`: the one mapping from
    /// PkgKit's outcomes to exit statuses.
    init(_ outcome: Outcome) {
        switch outcome {
        case .success: self = .success
        case .updatesAvailable: self = .updatesAvailable
        case .refused: self = .refused
        case .failed: self = .failed
        }
    }

    /// The argument parser's form, to throw.
    var exitCode: ExitCode { ExitCode(code) }

    var description: String { "exit \(code)" }
}

extension OutcomeReporting {
    /// The status the command exits with after printing this report.
    var exitStatus: ExitStatus { ExitStatus(outcome) }
}
