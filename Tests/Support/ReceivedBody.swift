import Foundation
import PkgKit

/// A response body collected from a transport's delivery thread, for tests to compare.
public final class ReceivedBody: Sendable {
    private let bytes = LockedValue(Data())

    /// An empty body.
    public init() {}

    /// Appends a chunk as it arrives.
    public func append(_ chunk: Data) { bytes.withLock { $0.append(chunk) } }

    /// Everything received so far.
    public var data: Data { bytes.current }
}
