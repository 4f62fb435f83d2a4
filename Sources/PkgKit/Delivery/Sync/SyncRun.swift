import PkgKitSupport

/// A sync under way (`SyncClient/startSync(_:)`): its progress as an asynchronous sequence, its
/// report when it is over, and a way to stop it.
///
/// ```swift
/// let run = client.startSync(options)
/// for await step in run.progress {
///     bar.progress = step.fraction          // in order, 0 to 1, never back
/// }
/// let report = try await run.report
/// ```
///
/// The sequence ends when the run does: with its last value (phase `finished`, fraction 1), or
/// without one when it was cancelled. A reader slower than the run skips to the newest value: it
/// never sees a stale one, and never misses the last. Only one task should read the sequence.
public struct SyncRun: Sendable {
    /// The run's progress, in the order it was made.
    public let progress: AsyncStream<SyncProgress>
    /// The run itself.
    private let task: Task<SyncReport, any Error>

    /// Starts `client`'s sync with `options` in a task of its own.
    init(client: SyncClient, options: SyncClient.Options) {
        let (progress, continuation) = AsyncStream.makeStream(of: SyncProgress.self, bufferingPolicy: .bufferingNewest(1))
        self.progress = progress
        task = Task {
            defer { continuation.finish() }
            return try await client.sync(options) { continuation.yield($0) }
        }
    }

    /// The sync's report, once it is over (as `SyncClient/sync(_:progress:)` returns it). Throws
    /// `OperationCancelled` when the run was cancelled, by `cancel()`, by its options'
    /// cancellation, or by cancelling the task that waits here.
    public var report: SyncReport {
        get async throws {
            let task = task
            return try await withTaskCancellationHandler {
                try await task.value
            } onCancel: {
                task.cancel()
            }
        }
    }

    /// Stops the run within moments: a download in progress is kept for the next run to resume,
    /// an install in progress removes its staging folder, and `report` throws `OperationCancelled`.
    public func cancel() {
        task.cancel()
    }
}

extension SyncClient {
    /// Starts a sync with `options` and returns at once: read the run's `progress` (an
    /// `AsyncSequence` of `SyncProgress`, on the main actor if you like) and await its `report`.
    /// The run goes on whether or not anyone reads them, until it is over or cancelled.
    public func startSync(_ options: Options) -> SyncRun {
        SyncRun(client: self, options: options)
    }
}
