
/// One read-ahead thread's work: it takes batches from the prefetcher and decodes their entries
/// until none is left or the reader has gone. `XarDeliveringWorker` hands every byte over;
/// `XarVerifyingWorker` checks each entry and keeps only its first bytes.
protocol XarPrefetchWorker: AnyObject {
    var prefetcher: XarPrefetcher { get }
    /// Decodes entry `index` of `batch`, leaving its bytes (or its first bytes) there and finishing
    /// it; throws only `XarPrefetcher.Cancelled`.
    func decode(_ index: Int, in batch: XarPrefetchBatch, cursor: inout XarPrefetchBatch.Cursor) throws
}

extension XarPrefetchWorker {
    /// Works until no batch is left or the reader has gone. A read that fails fails its entry,
    /// which the reader meets in order; the worker goes on to the next.
    package func run() {
        do {
            while let batch = prefetcher.take() {
                var cursor: XarPrefetchBatch.Cursor = nil
                for index in batch.first..<batch.end where prefetcher.work[index] {
                    prefetcher.begin(index, in: batch)
                    try decode(index, in: batch, cursor: &cursor)
                }
                prefetcher.batchDone()
            }
        } catch {
            // Cancelled: the reader has gone.
        }
    }
}
