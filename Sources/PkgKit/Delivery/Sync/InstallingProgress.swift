import Foundation

/// A sync's reports of the installing phase. Two sources feed it, the bytes of the package read
/// and each file staged (from other threads, and while the download still reports its own
/// phase), and every report carries the latest of both: an app's bar never sees a count go back.
package final class InstallingProgress: @unchecked Sendable {
    // @unchecked: the counts are only touched under `lock`; the rest is immutable.
    private let lock = NSLock()
    private var done: Int64 = 0
    private var total: Int64 = 0
    private var files = 0
    package let productIdentifier: String
    package let progress: @Sendable (SyncProgress) -> Void

    package init(productIdentifier: String, progress: @escaping @Sendable (SyncProgress) -> Void) {
        self.productIdentifier = productIdentifier
        self.progress = progress
    }

    /// The install has read `done` bytes of the package's `total`.
    package func read(_ done: Int64, of total: Int64) {
        report { self.done = max(self.done, done); self.total = total }
    }

    /// The install has staged `count` files of the version folder.
    package func staged(_ count: Int) {
        report { files = max(files, count) }
    }

    private func report(_ change: () -> Void) {
        let step = lock.withLock {
            change()
            return SyncProgress(productIdentifier: productIdentifier, phase: .installing, done: done, total: total, filesInstalled: files)
        }
        progress(step)
    }
}
