import Foundation

/// A ``LockedValue`` that threads can also wait on: ``withLock(waitingUntil:thenWake:_:)`` sleeps
/// until the value satisfies a condition, and a change wakes the threads waiting for it. What a
/// producer and consumer hand each other (a queue, a count of bytes ready, a "stopped" flag)
/// lives in one value, so no waiter reads a field outside the lock.
package final class ConditionLockedValue<Value> {
    /// Whom a change wakes.
    package enum Wake: Sendable {
        /// Nobody: the change cannot make a waiter's condition true.
        case none
        /// One waiter: any single one of them can take what the change made ready.
        case one
        /// Every waiter: their conditions differ, or all of them must see the change.
        case all
    }

    private let condition = NSCondition()
    private var value: Value

    /// A lock and condition guarding `value`.
    package init(_ value: Value) { self.value = value }

    /// Holding the lock, waits until `ready` holds for the value (at once if it does), runs
    /// `body`, then wakes the waiters `wake` names.
    package func withLock<T>(
        waitingUntil ready: (Value) -> Bool = { _ in true }, thenWake wake: Wake = .none,
        _ body: (inout Value) throws -> T
    ) rethrows -> T {
        condition.lock()
        defer {
            switch wake {
            case .none: break
            case .one: condition.signal()
            case .all: condition.broadcast()
            }
            condition.unlock()
        }
        while !ready(value) { condition.wait() }
        return try body(&value)
    }
}

// Unchecked: the value is only reached under `condition`.
extension ConditionLockedValue: @unchecked Sendable where Value: Sendable {}
