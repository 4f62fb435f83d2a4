
/// A read-ahead worker for `.verify`: each entry is decoded into scratch memory of the worker's
/// own and checked, and only its first bytes (`keepLimit`) go into the batch's blocks.
final class XarVerifyingWorker: XarPrefetchWorker {
    let prefetcher: XarPrefetcher
    private let decoder: XarEntryDecoder
    /// Bytes kept of entry `index`.
    private let keepLimit: (Int) -> Int
    private let scratch: UnsafeMutableRawBufferPointer

    package init(prefetcher: XarPrefetcher, decoder: XarEntryDecoder, keepLimit: @escaping (Int) -> Int) {
        self.prefetcher = prefetcher
        self.decoder = decoder
        self.keepLimit = keepLimit
        scratch = .allocate(byteCount: Int(XarEntryDecoder.wholeLimit), alignment: 16)
    }

    deinit { scratch.deallocate() }

    package func decode(_ index: Int, in batch: XarPrefetchBatch, cursor: inout XarPrefetchBatch.Cursor) throws {
        let record = prefetcher.table.records[index]
        var head = Head(limit: keepLimit(index))
        var failure: ReadError?
        do {
            if decoder.fitsWhole(record) {
                let output = UnsafeMutableRawBufferPointer(rebasing: scratch[0..<Int(record.size)])
                if case .decoded(let mismatch) = decoder.decodeWhole(index, into: output) {
                    try head.keep(UnsafeRawBufferPointer(output), of: index, in: batch, &cursor, prefetcher)
                    prefetcher.finish(index, in: batch, size: head.size, failure: mismatch)
                    return
                }
            }
            try decoder.start(index)
            let target = UnsafeMutableRawBufferPointer(rebasing: scratch[0..<min(scratch.count, XarBlockPool.blockSize)])
            while true {
                let count = try decoder.read(into: target)
                if count == 0 { break }
                try head.keep(UnsafeRawBufferPointer(rebasing: target[0..<count]), of: index, in: batch, &cursor, prefetcher)
                // An entry may be gigabytes: the reader's leaving is heard between chunks.
                try prefetcher.checkCancelled()
            }
        } catch let error as ReadError {
            failure = error
        }
        prefetcher.finish(index, in: batch, size: head.size, failure: failure)
    }

    /// One entry's bytes counted, and its first ones kept.
    private struct Head {
        let limit: Int
        var kept = 0
        var size: Int64 = 0

        init(limit: Int) { self.limit = limit }

        /// Counts `bytes`, copying into the batch those of them still to be kept.
        mutating func keep(_ bytes: UnsafeRawBufferPointer, of index: Int, in batch: XarPrefetchBatch,
                           _ cursor: inout XarPrefetchBatch.Cursor, _ prefetcher: XarPrefetcher) throws {
            size += Int64(bytes.count)
            guard kept < limit else { return }
            let count = min(bytes.count, limit - kept)
            let target = try prefetcher.space(batch, &cursor, atLeast: count, exact: count)
            target.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[0..<count]))
            prefetcher.commit(index, in: batch, &cursor, count)
            kept += count
        }
    }
}
