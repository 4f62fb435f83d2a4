import Foundation

/// A flag that asks long work (reading a package, installing it, downloading) to stop at the next
/// safe point: set it from a signal handler's queue, a UI, or a `Task` cancellation handler. Work
/// that sees it cleans up what it started (a staging folder; a partial download is kept for
/// resuming) and throws ``OperationCancelled``.
public final class Cancellation: Sendable {
    // A lock, not an atomic: Synchronization's Atomic needs macOS 15 / iOS 18.
    /// Whether the flag is set, and what to call when it is.
    private let state = LockedValue((cancelled: false, handlers: [@Sendable () -> Void]()))

    /// A flag not yet set.
    public init() {}

    /// Asks the work to stop.
    public func cancel() {
        let pending = state.withLock { state -> [@Sendable () -> Void] in
            defer { state = (true, []) }
            return state.cancelled ? [] : state.handlers
        }
        pending.forEach { $0() }
    }

    /// True once `cancel()` was called.
    public var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// Throws ``OperationCancelled`` when the flag is set.
    public func check() throws {
        if isCancelled { throw OperationCancelled() }
    }

    /// Calls `action` once when the flag is set (at once if it already is): how async work, which
    /// watches `Task` cancellation, hears of this flag.
    public func whenCancelled(_ action: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            if !state.cancelled { state.handlers.append(action) }
            return state.cancelled
        }
        if now { action() }
    }
}

/// Work stopped because its ``Cancellation`` was set; whatever it had started was cleaned up.
public struct OperationCancelled: Error, Sendable, Equatable {
    /// The error.
    public init() {}
}
