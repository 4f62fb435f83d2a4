import ArgumentParser
import PkgKit

/// An exit status of docs/exit-codes.md, and the one place where what a command ends with (a report
/// or an error) becomes one. PkgKit says only whether something was refused or failed
/// (`ErrorDisposition`); the numbers are the command line's.
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

    /// Refused is 1, failed is 2.
    init(_ disposition: ErrorDisposition) {
        self = disposition == .refused ? .refused : .failed
    }

    private init(code: Int32) { self.code = code }

    /// The status of a run whose findings are `diagnostics`: success when it `passed`; otherwise
    /// failed when an error says the work could not be done (`unreadable-input`, `io-error`),
    /// else refused.
    init(passed: Bool, _ diagnostics: [Diagnostic]) {
        if passed {
            self = .success
        } else {
            let failed = diagnostics.contains { $0.severity == .error && $0.code.disposition == .failed }
            self = failed ? .failed : .refused
        }
    }

    /// The status of a run that ended by throwing `error`: a library error's disposition, an
    /// exit status or usage error of the argument parser's, else failed (the work was not done).
    init(error: any Error) {
        switch error {
        case let error as any DiagnosableError: self.init(error.disposition)
        case let exit as ExitCode: self.init(code: exit.rawValue)
        case is ValidationError, is UsageError: self = .usage
        default: self = .failed
        }
    }

    /// The argument parser's form, to throw.
    var exitCode: ExitCode { ExitCode(code) }

    var description: String { "exit \(code)" }
}

/// A report that says how its command ends. Every report type a command prints conforms here,
/// next to the others, so that the whole mapping is read in one place.
protocol StatusReporting {
    /// The status the command exits with after printing this report.
    var exitStatus: ExitStatus { get }
}

extension CreateResult: StatusReporting {
    /// Written, or refused by the rules (create's failures are thrown, not reported).
    var exitStatus: ExitStatus { output == nil ? .refused : .success }
}

extension ValidationReport: StatusReporting {
    /// A path that could not be read at all outweighs an invalid package.
    var exitStatus: ExitStatus { ExitStatus(passed: valid, diagnostics + packages.flatMap(\.diagnostics)) }
}

extension InstallReport: StatusReporting {
    var exitStatus: ExitStatus { status == .refused ? .refused : .success }
}

extension ExtractReport: StatusReporting {
    var exitStatus: ExitStatus {
        switch self {
        case .done(let report): return report.exitStatus
        case .failed: return .failed
        }
    }
}

extension InspectReport: StatusReporting {
    var exitStatus: ExitStatus { ExitStatus(passed: isWhole, diagnostics) }
}

extension DiffReport: StatusReporting {
    /// 0 only for `ok`; 2 when a side could not be read at all.
    var exitStatus: ExitStatus { ExitStatus(passed: verdict == .ok, old.diagnostics + new.diagnostics) }
}

extension ConvertReport: StatusReporting {
    var exitStatus: ExitStatus {
        switch status {
        case .converted: return .success
        case .refused: return .refused
        case .failed: return .failed
        }
    }
}

extension SyncReport: StatusReporting {
    /// docs/sync.md: 0 installed or unchanged, 1 refused (refusal wins), 2 failed; with
    /// `--check`, 3 when updates are available and nothing was refused or failed.
    var exitStatus: ExitStatus {
        switch outcome {
        case .success: return .success
        case .updatesAvailable: return .updatesAvailable
        case .refused: return .refused
        case .failed: return .failed
        }
    }
}

extension PublishReport: StatusReporting {
    /// docs/sync.md: 0 published or unchanged, 1 refused, 2 could not be done.
    var exitStatus: ExitStatus {
        switch status {
        case .published, .unchanged: return .success
        case .refused: return .refused
        case .failed: return .failed
        }
    }
}

extension KeygenReport: StatusReporting {
    /// 0 when a key pair was made or kept.
    var exitStatus: ExitStatus {
        switch status {
        case .created, .existing: return .success
        case .refused: return .refused
        case .failed: return .failed
        }
    }
}
