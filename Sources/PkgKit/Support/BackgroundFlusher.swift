import Foundation
#if os(Linux)
internal import CSyscalls
#endif

/// Flushes what is being written to the device on a thread of its own, each time another `step`
/// bytes have been written, so that the final `fsync` or `syncfs` finds little left to do.
///
/// `sync_file_range` (`DiskWriteback`) only hands data to the device, which may keep it in a
/// cache of its own until told to flush: a virtual disk's host then writes it out only at the
/// final flush, with the process waiting. Flushing in the background lets that happen while the
/// next bytes are inflated or compressed.
///
/// At most one flush runs at a time; bytes written meanwhile count towards the next.
// Unchecked: the counters are touched only under `condition`.
package final class BackgroundFlusher: @unchecked Sendable {
    /// What is flushed.
    package enum Scope {
        /// The one file written (`fsync`).
        case file
        /// The whole file system the descriptor is on (`syncfs`): many files written at once.
        /// Elsewhere than Linux, which has no `syncfs`, nothing is flushed in the background.
        case fileSystem
    }

    /// Bytes written between two flushes.
    package static let step: Int64 = 16 << 20

    private let descriptor: Int32
    private let scope: Scope
    private let condition = NSCondition()
    private var pending: Int64 = 0
    private var flushing = false
    private var started = 0

    /// How many flushes have been started so far.
    package var flushesStarted: Int {
        condition.lock()
        defer { condition.unlock() }
        return started
    }

    /// Flushes `descriptor`'s file or file system; the descriptor must stay open while writing
    /// goes on (each flush works on a duplicate of its own).
    package init(descriptor: Int32, scope: Scope) {
        self.descriptor = descriptor
        self.scope = scope
    }

    /// Counts `bytes` written, and starts a flush once `step` have gathered while none runs.
    package func wrote(_ bytes: Int64) {
        #if !os(Linux)
        if scope == .fileSystem { return }
        #endif
        condition.lock()
        pending += bytes
        guard pending >= Self.step, !flushing else {
            condition.unlock()
            return
        }
        // The flush may outlast the writer's descriptor (a failed install closes it at once).
        let own = dup(descriptor)
        guard own >= 0 else {
            condition.unlock()
            return
        }
        pending = 0
        flushing = true
        started += 1
        condition.unlock()
        let scope = scope
        Thread.detachNewThread { [self] in
            switch scope {
            case .file: _ = fsync(own)
            case .fileSystem:
                #if os(Linux)
                _ = CSyscalls_syncfs(own)
                #endif
            }
            close(own)
            condition.lock()
            flushing = false
            condition.broadcast()
            condition.unlock()
        }
    }

    /// Waits for the flush under way, if any.
    package func wait() {
        condition.lock()
        while flushing { condition.wait() }
        condition.unlock()
    }
}
