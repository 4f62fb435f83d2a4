import Foundation

/// A count of bytes shared between tasks and threads (what arrived, where a transfer is).
// Unchecked: `count` is only touched under `lock`.
final class ByteCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count: Int64

    init(_ start: Int64 = 0) { count = start }

    func add(_ bytes: Int64) { lock.withLock { count += bytes } }
    var value: Int64 { lock.withLock { count } }
}
