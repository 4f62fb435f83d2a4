
/// How a piece of work ended, in the one vocabulary every report and status of PkgKit shares, so
/// that a front end turns any of them into its own terms (for `pkgtool`, an exit status) in one
/// place, without knowing each report.
public enum Outcome: String, Sendable, CaseIterable {
    /// The work was done (warnings allowed).
    case success
    /// A check found updates a sync would install, and nothing was refused or failed.
    case updatesAvailable
    /// The input was judged and refused: a person must act.
    case refused
    /// The work could not be done (missing input, I/O error, an unreachable server); it may pass
    /// by itself.
    case failed

    /// The outcome of work whose findings are `diagnostics`: success when it `passed`; otherwise
    /// failed when an error's code says the work could not be done (`unreadable-input`,
    /// `io-error`), else refused.
    public init(passed: Bool, _ diagnostics: [Diagnostic]) {
        if passed {
            self = .success
        } else {
            self = diagnostics.contains { $0.severity == .error && $0.code.disposition == .failed } ? .failed : .refused
        }
    }
}

extension Outcome: RefusedOrFailed {}

/// A report or status that says how its work ended. Each one maps its own cases here, next to
/// its declaration, so that the mapping to a front end's terms is made once, from `Outcome`.
public protocol OutcomeReporting {
    /// How the work ended.
    var outcome: Outcome { get }
}
