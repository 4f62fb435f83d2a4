import Foundation

/// Runs blocking work (waiting on a condition, a child process, a file to grow) on a thread of
/// its own and awaits it: Swift's cooperative threads, as many as cores, stay free for the tests
/// running beside it, whose awaits would otherwise starve (`Task.detached` runs on those threads too).
public func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
    }
}

/// `offThePool` for work that cannot throw.
public func offThePool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread.detachNewThread { continuation.resume(returning: body()) }
    }
}
