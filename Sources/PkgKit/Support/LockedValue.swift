import Foundation

/// A value shared between threads that is reached only under its lock, through ``withLock(_:)``:
/// the one way the library and its tools guard mutable state, so no type keeps a lock of its own
/// beside fields it promises to touch only while holding it.
///
/// An `NSLock` on every platform: `Synchronization.Mutex` needs macOS 15 / iOS 18, and PkgKit
/// supports macOS 13 / iOS 16.
package final class LockedValue<Value> {
    private let lock = NSLock()
    private var value: Value

    /// A lock guarding `value`.
    package init(_ value: Value) { self.value = value }

    /// Runs `body` with the value, holding the lock; what `body` changes is what the next caller sees.
    package func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

// Unchecked: the value is only reached under `lock`.
extension LockedValue: @unchecked Sendable where Value: Sendable {}

extension LockedValue where Value: Sendable {
    /// The value now (a copy, taken under the lock).
    package var current: Value { withLock { $0 } }
}
