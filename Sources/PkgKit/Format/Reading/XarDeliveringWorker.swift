
/// A read-ahead worker for `.deliver`: every decoded byte goes into the batch's blocks, written
/// there directly, for the reader to copy out.
final class XarDeliveringWorker: XarPrefetchWorker {
    let prefetcher: XarPrefetcher
    private let decoder: XarEntryDecoder
    /// How much room a streamed chunk asks for at least.
    private static let chunk = 64 << 10

    package init(prefetcher: XarPrefetcher, decoder: XarEntryDecoder) {
        self.prefetcher = prefetcher
        self.decoder = decoder
    }

    package func decode(_ index: Int, in batch: XarPrefetchBatch, cursor: inout XarPrefetchBatch.Cursor) throws {
        let record = prefetcher.table.records[index]
        if decoder.fitsWhole(record) {
            let count = Int(record.size)
            let output = try prefetcher.space(batch, &cursor, atLeast: count, exact: count)
            // Inflated cleanly but a digest differs: the bytes are handed over, then the failure.
            if case .decoded(let mismatch) = decoder.decodeWhole(index, into: output) {
                prefetcher.commit(index, in: batch, &cursor, count)
                prefetcher.finish(index, in: batch, size: Int64(count), failure: mismatch)
                return
            }
            // Left unused, the room is what streaming writes into next.
        }
        var size: Int64 = 0
        var failure: ReadError?
        do {
            try decoder.start(index)
            while true {
                let target = try prefetcher.space(batch, &cursor, atLeast: Self.chunk, exact: nil)
                let count = try decoder.read(into: target)
                if count == 0 { break }
                size += Int64(count)
                prefetcher.commit(index, in: batch, &cursor, count)
            }
        } catch let error as ReadError {
            failure = error
        }
        prefetcher.finish(index, in: batch, size: size, failure: failure)
    }
}
