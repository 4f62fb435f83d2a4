import Foundation

/// A response body collected from a transport's delivery thread, for tests to compare.
public final class ReceivedBody: @unchecked Sendable {
    // @unchecked: `bytes` is only touched under `lock`.
    private let lock = NSLock()
    private var bytes = Data()

    /// An empty body.
    public init() {}

    /// Appends a chunk as it arrives.
    public func append(_ chunk: Data) { lock.withLock { bytes.append(chunk) } }

    /// Everything received so far.
    public var data: Data { lock.withLock { bytes } }
}
