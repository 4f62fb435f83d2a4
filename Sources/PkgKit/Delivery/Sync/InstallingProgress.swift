import Foundation
import PkgKitSupport

/// A sync's reports of the installing phase. Two sources feed it, the bytes of the package read
/// and each file staged (from other threads, and while the download still reports its own
/// phase), and every report carries the latest of both: an app's bar never sees a count go back.
final class InstallingProgress: Sendable {
    /// The latest counts of both sources.
    private let latest: LockedValue<(done: Int64, total: Int64, files: Int)> = LockedValue((0, 0, 0))
    package let productIdentifier: String
    package let progress: @Sendable (SyncProgress) -> Void

    package init(productIdentifier: String, progress: @escaping @Sendable (SyncProgress) -> Void) {
        self.productIdentifier = productIdentifier
        self.progress = progress
    }

    /// The install has read `done` bytes of the package's `total`.
    package func read(_ done: Int64, of total: Int64) {
        report { $0.done = max($0.done, done); $0.total = total }
    }

    /// The install has staged `count` files of the version folder.
    package func staged(_ count: Int) {
        report { $0.files = max($0.files, count) }
    }

    private func report(_ change: (inout (done: Int64, total: Int64, files: Int)) -> Void) {
        let step = latest.withLock {
            change(&$0)
            return SyncProgress(productIdentifier: productIdentifier, phase: .installing, done: $0.done, total: $0.total, filesInstalled: $0.files)
        }
        progress(step)
    }
}
