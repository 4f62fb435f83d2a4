
/// How a caller will read file data, told to a reader before it starts, so that it can work ahead.
package enum ReadAheadPlan: Sendable {
    /// Every byte of every file will be read, in order (extract, diff).
    case deliver
    /// Each file is only checked: nothing beyond its first bytes is wanted (validate).
    case verify
}

/// A file's data read to its end and checked, without handing the bytes over.
package struct VerifiedData: Sendable {
    /// Bytes the data really holds.
    package var size: Int64
    /// How many of the first bytes were copied into the caller's buffer.
    package var headCount: Int
    /// A checksum mismatch (the data was read in full, but is not what the TOC says), or nil.
    package var failure: ReadError?
}

/// A reader that can read and check file data ahead of its caller, on other threads.
package protocol ReadAheadReader: AnyObject {
    /// Starts working ahead on the entries after the current one; false when this reader cannot.
    /// Called once, before any data of those entries is read.
    func startReadAhead(_ plan: ReadAheadPlan) -> Bool
    /// Reads the current file to its end and checks it, copying its first bytes into `head`.
    /// Throws what `readData` would, except a checksum mismatch, which is returned.
    func verifyData(head: UnsafeMutableRawBufferPointer) throws -> VerifiedData
}

extension ReadAheadReader where Self: PackageReader {
    /// `verifyData` by reading every byte through `readData`, for entries not read ahead.
    func verifyByReading(head: UnsafeMutableRawBufferPointer, scratch: UnsafeMutableRawBufferPointer) throws -> VerifiedData {
        var result = VerifiedData(size: 0, headCount: 0, failure: nil)
        while true {
            let count: Int
            do {
                count = try readData(into: scratch)
            } catch let error as ReadError {
                guard case .checksumMismatch = error else { throw error }
                result.failure = error
                return result
            }
            if count == 0 { return result }
            let copied = min(count, head.count - result.headCount)
            if copied > 0 {
                UnsafeMutableRawBufferPointer(rebasing: head[result.headCount..<result.headCount + copied])
                    .copyMemory(from: UnsafeRawBufferPointer(rebasing: scratch[0..<copied]))
                result.headCount += copied
            }
            result.size += Int64(count)
        }
    }
}
