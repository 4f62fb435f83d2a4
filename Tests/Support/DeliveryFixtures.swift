import Crypto
import Foundation
import PkgKit

/// Deterministic pseudo-random bytes (so a failure can be reproduced).
public func pseudoRandomData(_ count: Int, seed: UInt64 = 0x9E37_79B9_7F4A_7C15) -> Data {
    var state = seed
    var bytes = [UInt8](repeating: 0, count: count)
    for index in 0..<count {
        state = state &* 6364136223846793005 &+ 1442695040888963407
        bytes[index] = UInt8(truncatingIfNeeded: state >> 33)
    }
    return Data(bytes)
}

/// Lowercase hex sha256.
public func sha256Hex(_ data: Data) -> String { SHA256.hash(data: data).hexString }

/// Lowercase hex sha1 (a xar TOC's checksum of a file).
public func sha1Hex(_ data: Data) -> String { Insecure.SHA1.hash(data: data).hexString }

/// Progress reports collected from the transport's thread.
public final class ProgressLog: Sendable {
    private let values = LockedValue<[(Int64, Int64)]>([])

    public init() {}

    /// Records one report.
    public func record(_ done: Int64, _ total: Int64) { values.withLock { $0.append((done, total)) } }
    /// Every report so far.
    public var all: [(Int64, Int64)] { values.current }
}
