import PkgKitSupport

/// Attempts shared by several transfers of one job (the ranged requests of one delta update), so
/// that `RetryPolicy.maximumTotalAttempts` bounds the job as a whole: a server failing each of a
/// thousand ranges does not earn a thousand fresh allowances.
public final class RetryBudget: Sendable {
    private let spent = LockedValue(0)

    /// An unspent budget.
    public init() {}

    /// Attempts made so far against it.
    public var attempts: Int { spent.current }

    /// Counts one attempt; returns the attempts made so far, this one included.
    func spend() -> Int { spent.withLock { $0 += 1; return $0 } }
}
