
/// The bytes of one package, wherever they are: every byte pkgtool's xar reader reads comes
/// through here. `PackageFile` is a package on disk.
///
/// A package may also be one still arriving over the network, front to back. Its `read` then
/// blocks until the bytes asked for have arrived, and throws once they never will (the transfer
/// failed or was cancelled). Readers are written for that: any read may block for a long
/// time or throw, what a source throws reaches the reader's caller as a `ReadError`, and nothing
/// takes `size` for what can be read now.
public protocol PackageBytes: Sendable {
    /// The package's size in bytes: its final size, known before all of it can be read.
    var size: Int64 { get }

    /// Copies the package's bytes from `offset` on into `buffer` until it is full or the package
    /// ends, and returns how many: fewer than `buffer.count` only at the package's end. Blocks
    /// until the bytes are there; throws when they cannot be had (a `ReadError` reaches the
    /// reader's caller as it is, any other error as `ReadError.io`). Called from several threads
    /// at once; a reader that is closed first waits for the reads under way to return.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int
}

extension PackageBytes {
    /// `read`, what the source throws made a `ReadError` on `path`.
    package func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64, path: String) throws(ReadError) -> Int {
        do {
            return try readChecked(into: buffer, at: offset)
        } catch {
            throw ReadError(sourceFailure: error, path: path)
        }
    }

    /// `read`, with a count outside the buffer (a source's bug) refused rather than trusted.
    func readChecked(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        let count = try read(into: buffer, at: offset)
        guard count >= 0, count <= buffer.count else { throw MiscountedRead(count: count, asked: buffer.count) }
        return count
    }
}

/// A source that said it read more bytes than were asked for, or fewer than none.
private struct MiscountedRead: Error, CustomStringConvertible {
    var count: Int
    var asked: Int
    var description: String { "the package's source gave \(count) bytes when \(asked) were asked for" }
}

extension ReadError {
    /// What a package's source threw, as a reader's caller sees it: a `ReadError` as it is,
    /// anything else as the input failing.
    package init(sourceFailure error: any Error, path: String) {
        self = error as? ReadError ?? .io(path: path, String(describing: error))
    }

    /// The words without the path.
    package var message: String {
        switch self {
        case .io(_, let message), .unreadable(_, let message), .checksumMismatch(_, let message), .duplicateEntry(_, let message):
            return message
        }
    }
}
