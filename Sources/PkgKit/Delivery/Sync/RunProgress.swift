import PkgKitSupport
import PkgKitCatalog

/// One sync run's progress, kept as the run goes and handed out as `SyncProgress` values: the
/// work of every product to update (its package's bytes downloaded, then read by the install, and
/// its files written) summed over the run, and one fraction of it that never goes back.
///
/// The totals are first estimated from the catalog before any product is touched (every product
/// whose installed version is older: its package's size to download and to read, its file count),
/// then made exact as each product's plan and its delta's ranges become known, and a product that
/// ends (installed, unchanged, refused or failed) has its work counted done (its remaining bytes
/// leave the total when it did not install). Values are delivered under one lock, so that every
/// reader sees them in the order they were made.
final class RunProgress: Sendable {
    /// One product's share of the run.
    private struct Work {
        /// Bytes of the package here (a resumed download's included).
        var downloadDone: Int64 = 0
        /// Bytes of the package to have: the whole package, or a delta's ranges.
        var downloadTotal: Int64 = 0
        /// Bytes of the package the install has read.
        var installDone: Int64 = 0
        /// Bytes of the package the install reads in all.
        var installTotal: Int64 = 0
        /// Files of the new version written.
        var filesDone = 0
        /// Files of the new version in all.
        var filesTotal = 0

        /// Downloaded and read.
        var bytesDone: Int64 { downloadDone + installDone }
        /// To download and to read.
        var bytesTotal: Int64 { downloadTotal + installTotal }
        /// The download has brought all it planned to: the install is what remains.
        var downloaded: Bool { downloadTotal > 0 && downloadDone >= downloadTotal }
    }

    /// The run so far: each product's work, their sums, and what was last delivered.
    private struct State {
        /// Each product's work, by identifier.
        var works: [String: Work] = [:]
        /// The sums of every product's work.
        var bytesDone: Int64 = 0
        var bytesTotal: Int64 = 0
        var filesDone = 0
        var filesTotal = 0
        /// The last value delivered (nil before the first).
        var last: SyncProgress?
    }

    /// The run so far.
    private let state = LockedValue(State())
    /// Where the values go, in the order they are made (called under the lock).
    private let deliver: @Sendable (SyncProgress) -> Void
    /// The least rise of `fraction` worth a value of its own (a phase or product change, or a
    /// file written, always is).
    private static let step = 0.001

    /// Progress delivered to `deliver`, on whichever thread the work reports from.
    init(deliver: @escaping @Sendable (SyncProgress) -> Void) {
        self.deliver = deliver
    }

    /// The catalog is being fetched.
    func fetchingCatalog() {
        change(nil, phase: .catalog) { _ in }
    }

    /// `entry` is expected to be downloaded whole (`resumingFrom` of it already there) and
    /// installed for product `id`: its bytes and files join the totals.
    func expect(_ id: String, size: Int64, resumingFrom: Int64 = 0, files: Int) {
        change(id, phase: nil) { work in
            work = Work(downloadDone: min(resumingFrom, size), downloadTotal: size, installTotal: size, filesTotal: files)
        }
    }

    /// Product `id` has nothing to download or install after all.
    func expectNothing(_ id: String) {
        change(id, phase: nil) { work in work = Work() }
    }

    /// A delta of product `id` downloads `total` bytes in all (header and TOC included), not the
    /// whole package.
    func plannedDownload(_ id: String, total: Int64) {
        change(id, phase: .downloading) { work in work.downloadTotal = max(total, work.downloadDone) }
    }

    /// `done` bytes of product `id`'s download are here.
    func downloaded(_ id: String, _ done: Int64) {
        change(id, phase: .downloading) { work in
            work.downloadDone = max(work.downloadDone, done)
            work.downloadTotal = max(work.downloadTotal, work.downloadDone)
        }
    }

    /// The install of product `id` has read `done` bytes of the package's `total`.
    func read(_ id: String, _ done: Int64, of total: Int64) {
        change(id, phase: .installing) { work in
            if total > 0 { work.installTotal = total }
            work.installDone = max(work.installDone, done)
            work.installTotal = max(work.installTotal, work.installDone)
        }
    }

    /// The install of product `id` has written `count` files of the new version.
    func staged(_ id: String, _ count: Int) {
        change(id, phase: .installing) { work in
            work.filesDone = max(work.filesDone, count)
            work.filesTotal = max(work.filesTotal, work.filesDone)
        }
    }

    /// Product `id` is done with: installed (`completed`: all its work counts done) or not (what
    /// it did not do leaves the totals).
    func ended(_ id: String, completed: Bool) {
        change(id, phase: nil) { work in
            if completed {
                (work.downloadDone, work.installDone, work.filesDone) = (work.downloadTotal, work.installTotal, work.filesTotal)
            } else {
                (work.downloadTotal, work.installTotal, work.filesTotal) = (work.downloadDone, work.installDone, work.filesDone)
            }
        }
    }

    /// The run is over, however it went: the last value, whose fraction is 1.
    func finished() {
        state.withLock { state in
            var last = state.last ?? SyncProgress(phase: .finished, productIdentifier: nil)
            last.phase = .finished
            last.productIdentifier = nil
            (last.bytesDone, last.bytesTotal, last.filesDone, last.filesTotal) = (state.bytesDone, state.bytesTotal, state.filesDone, state.filesTotal)
            last.fraction = 1
            state.last = last
            deliver(last)
        }
    }

    /// Applies `edit` to product `id`'s work (none for the catalog), then delivers the new value
    /// when it says something new: another phase or product, another file, or a fraction risen by `step`.
    private func change(_ id: String?, phase: SyncProgress.Phase?, _ edit: (inout Work) -> Void) {
        state.withLock { state in
            let previous = state.last ?? SyncProgress(phase: .catalog, productIdentifier: nil)
            var next = previous
            if let id {
                var work = state.works[id] ?? Work()
                let before = work
                edit(&work)
                state.works[id] = work
                state.bytesDone += work.bytesDone - before.bytesDone
                state.bytesTotal += work.bytesTotal - before.bytesTotal
                state.filesDone += work.filesDone - before.filesDone
                state.filesTotal += work.filesTotal - before.filesTotal
                if let phase {
                    next.productIdentifier = id
                    // A streamed install reads while the download goes on: it is downloading
                    // until every byte is here.
                    next.phase = phase == .installing && !work.downloaded && work.downloadTotal > 0 ? .downloading : phase
                }
            } else if let phase {
                (next.productIdentifier, next.phase) = (nil, phase)
            }
            (next.bytesDone, next.bytesTotal, next.filesDone, next.filesTotal) = (state.bytesDone, state.bytesTotal, state.filesDone, state.filesTotal)
            let measured = state.bytesTotal > 0 ? Double(state.bytesDone) / Double(state.bytesTotal) : 0
            // Never back: a total that grows (an estimate too low) holds the fraction until the
            // work catches up. Never 1 before the run is over.
            next.fraction = min(max(previous.fraction, measured), Self.almostDone)
            let news = state.last == nil || next.phase != previous.phase || next.productIdentifier != previous.productIdentifier
                || next.filesDone != previous.filesDone || next.fraction - previous.fraction >= Self.step
            guard news, previous.phase != .finished else { return }
            state.last = next
            deliver(next)
        }
    }

    /// The highest fraction before the run is over: 1 means it is.
    private static let almostDone = 0.999
}

extension RunProgress {
    /// What `plan` will download and install for product `id`.
    func expect(_ plan: SyncPlan, of id: String) {
        guard case .update(let update) = plan else { return expectNothing(id) }
        var resumingFrom: Int64 = 0
        if case .full(let resumed, _) = update.method { resumingFrom = resumed }
        expect(id, size: update.entry.size, resumingFrom: resumingFrom, files: update.entry.fileCount)
    }
}
