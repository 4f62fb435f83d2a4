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
package final class BackgroundFlusher: Sendable {
    /// What is flushed.
    package enum Scope: Sendable {
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
    /// The bytes written since the last flush started, whether one runs, and how many did.
    private let state = ConditionLockedValue((pending: Int64(0), flushing: false, started: 0))

    /// How many flushes have been started so far.
    package var flushesStarted: Int { state.withLock { $0.started } }

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
        let descriptor = descriptor
        let flushed = state.withLock { state -> Int32? in
            state.pending += bytes
            guard state.pending >= Self.step, !state.flushing else { return nil }
            // The flush may outlast the writer's descriptor (a failed install closes it at once).
            let own = dup(descriptor)
            guard own >= 0 else { return nil }
            state.pending = 0
            state.flushing = true
            state.started += 1
            return own
        }
        guard let own = flushed else { return }
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
            state.withLock(thenWake: .all) { $0.flushing = false }
        }
    }

    /// Waits for the flush under way, if any.
    package func wait() {
        state.withLock(waitingUntil: { !$0.flushing }) { _ in }
    }
}
