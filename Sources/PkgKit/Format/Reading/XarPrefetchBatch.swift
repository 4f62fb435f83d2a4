import PkgKitDiagnostics

/// Consecutive entries a read-ahead worker decodes in one go, and what it has handed over of
/// them: their bytes in blocks, each entry's run of pieces, and how each ended. Its fields are
/// read and written only under the lock of the `XarPrefetcher` that made it.
final class XarPrefetchBatch {
    /// Bytes of one entry in one block.
    package struct Piece {
        package var block: Int
        package var start: Int
        package var count: Int
    }

    /// One entry's data so far.
    package struct Outcome {
        var pieceStart = 0
        var pieceCount = 0
        /// Bytes the data held (when delivering, also the bytes in its pieces).
        package var size: Int64 = 0
        package var done = false
        package var failure: ReadError?
    }

    /// Where a worker writes next: a block of the batch and the bytes of it used.
    typealias Cursor = (block: Int, used: Int)?

    /// The entries' indices: `first..<end`.
    package let first: Int
    package let end: Int
    package var blocks: [UnsafeMutableRawBufferPointer?] = []
    package var pieces: [Piece] = []
    package var outcomes: [Outcome]
    /// Bytes of blocks not yet given back.
    var retained = 0
    /// Blocks below this index have been given back.
    package var released = 0

    package init(first: Int, end: Int) {
        self.first = first
        self.end = end
        outcomes = Array(repeating: Outcome(), count: end - first)
    }

    /// Adds `block` for the entries' bytes; the cursor that writes at its start.
    package func append(_ block: UnsafeMutableRawBufferPointer) -> Cursor {
        blocks.append(block)
        retained += block.count
        return (blocks.count - 1, 0)
    }

    /// Gives the blocks below `limit` back to `pool`.
    package func release(below limit: Int, to pool: XarBlockPool) {
        guard limit > released else { return }
        for index in released..<limit {
            guard let block = blocks[index] else { continue }
            blocks[index] = nil
            retained -= block.count
            pool.give(block)
        }
        released = limit
    }

    /// Gives every block back to `pool`: the reader has left the batch.
    func releaseAll(to pool: XarBlockPool) { release(below: blocks.count, to: pool) }
}
