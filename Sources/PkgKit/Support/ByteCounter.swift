import Foundation

/// A count of bytes shared between tasks and threads (what arrived, where a transfer is).
package final class ByteCounter: Sendable {
    private let count: LockedValue<Int64>

    /// A count starting at `start`.
    package init(_ start: Int64 = 0) { count = LockedValue(start) }

    /// Counts `bytes` more.
    package func add(_ bytes: Int64) { count.withLock { $0 += bytes } }
    /// The count now.
    package var value: Int64 { count.current }
}
