import Foundation
import PkgKitSupport

/// Attempts shared by several transfers of one job (the ranged requests of one delta update), so
/// that `RetryPolicy.maximumTotalAttempts` bounds the job as a whole: a server failing each of a
/// thousand ranges does not earn a thousand fresh allowances.
// Unchecked: `spent` is only touched under `lock`.
public final class RetryBudget: @unchecked Sendable {
    private let lock = NSLock()
    private var spent = 0

    /// An unspent budget.
    public init() {}

    /// Attempts made so far against it.
    public var attempts: Int { lock.withLock { spent } }

    /// Counts one attempt; returns the attempts made so far, this one included.
    func spend() -> Int { lock.withLock { spent += 1; return spent } }
}
