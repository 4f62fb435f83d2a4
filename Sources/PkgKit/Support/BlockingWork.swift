import Foundation

/// Runs blocking work (file-system walks, hashing on worker threads, an install) on a thread of
/// its own and awaits it, so that it never holds one of Swift's few cooperative threads (as many
/// as cores) that transfers and timers need meanwhile.
package enum BlockingWork {
    /// `body`'s result, computed on a new thread.
    package static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { continuation.resume(with: Result { try body() }) }
            // Installs and hashing pools read deep trees: room for their recursion.
            thread.stackSize = 8 << 20
            thread.start()
        }
    }
}
