import Foundation

/// A count of bytes shared between tasks and threads (what arrived, where a transfer is).
// Unchecked: `count` is only touched under `lock`.
package final class ByteCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count: Int64

    package init(_ start: Int64 = 0) { count = start }

    package func add(_ bytes: Int64) { lock.withLock { count += bytes } }
    package var value: Int64 { lock.withLock { count } }
}
