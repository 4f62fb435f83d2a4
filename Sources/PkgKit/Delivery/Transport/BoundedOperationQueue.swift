import Foundation

/// An `OperationQueue` whose `addOperation` waits while `limit` of its operations are already
/// queued or running: back-pressure for a URLSession's delegate queue.
///
/// FoundationNetworking (Linux) hands every chunk libcurl reads (16 KiB at most) to the session's
/// delegate queue as one operation and cannot pause a transfer, so a consumer slower than the
/// network (a disk that throttles writes, a busy core) would let the body pile up in memory: up to
/// 20 MiB more at the peak of a 234 MB download over loopback. With this queue the session's
/// network thread waits instead; libcurl stops reading the socket and TCP slows the server down.
/// Only callers outside the queue wait: an operation of the queue adding another never does.
///
/// That network thread is FoundationNetworking's one queue for every URLSession of the process
/// (swift-corelibs-foundation targets each session's work queue at a shared serial queue), so
/// while a handler lags, the process's other sessions wait too. pkgtool's `sync` has one session
/// and one transfer at a time; an app that links PkgKit on Linux and runs other transfers beside
/// a download to a slow disk sees them slowed to that disk's pace, never their memory grown.
final class BoundedOperationQueue: OperationQueue, @unchecked Sendable {
    // @unchecked: `pending` and `peak` are only touched under `condition`; `limit` is immutable.
    /// The most operations queued or running at once.
    let limit: Int
    private let condition = NSCondition()
    private var pending = 0
    private var peak = 0

    /// A serial queue (one operation at a time) holding at most `limit` operations.
    init(limit: Int, name: String) {
        self.limit = max(1, limit)
        super.init()
        maxConcurrentOperationCount = 1
        self.name = name
    }

    /// The most operations that were ever queued or running at once.
    var highWater: Int { condition.withLock { peak } }

    /// Whether any operation is queued or running: for a session's delegate queue, bytes that
    /// arrived from the network and that their handler has not yet seen.
    var isBehind: Bool { condition.withLock { pending > 0 } }

    override func addOperation(_ operation: Operation) {
        condition.lock()
        // An operation of this queue adding another would wait for itself.
        if OperationQueue.current !== self {
            while pending >= limit { condition.wait() }
        }
        pending += 1
        peak = max(peak, pending)
        condition.unlock()
        super.addOperation(BlockOperation { [self] in
            operation.start()
            condition.withLock {
                pending -= 1
                condition.broadcast()
            }
        })
    }
}
