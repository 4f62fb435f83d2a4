
/// The memory decoded entries wait in for the reader: blocks of `blockSize` bytes (or, for an
/// entry decoded in one call, of its size rounded up to it), counted while handed out, and kept
/// to be handed out again once given back, up to `maxPooled` bytes: a fresh mapping costs a page
/// fault per 4 KiB.
///
/// Not thread-safe: its owner calls it under its own lock.
final class XarBlockPool {
    package static let blockSize = 1 << 20
    /// Freed bytes kept to be handed out again.
    static let maxPooled = 2 << 20

    /// Bytes in blocks handed out and not given back.
    package private(set) var retained = 0
    private var free: [Int: [UnsafeMutableRawBufferPointer]] = [:]
    private var pooled = 0

    deinit { free.values.forEach { $0.forEach { $0.deallocate() } } }

    /// The size of the block that holds `count` bytes.
    package static func size(holding count: Int) -> Int {
        max(blockSize, (count + blockSize - 1) / blockSize * blockSize)
    }

    /// A block of `size` bytes (one `size(holding:)` gave), a freed one when there is one.
    package func take(_ size: Int) -> UnsafeMutableRawBufferPointer {
        retained += size
        if var blocks = free[size], let freed = blocks.popLast() {
            free[size] = blocks
            pooled -= size
            return freed
        }
        return .allocate(byteCount: size, alignment: 16)
    }

    /// Takes back a block `take` gave.
    package func give(_ block: UnsafeMutableRawBufferPointer) {
        retained -= block.count
        if pooled + block.count <= Self.maxPooled {
            free[block.count, default: []].append(block)
            pooled += block.count
        } else {
            block.deallocate()
        }
    }
}
