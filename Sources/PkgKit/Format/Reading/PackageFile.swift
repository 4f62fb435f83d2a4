import Foundation
import PkgKitSupport

/// A package file on disk, read with `pread`: its size is the file's when it was opened.
public final class PackageFile: PackageBytes {
    /// The file's path, which its errors name.
    public let path: String
    /// The file's size when it was opened.
    public let size: Int64
    private let descriptor: Int32

    /// Opens the file at `path`; throws `ReadError.io` when the system refuses.
    public init(path: String) throws(ReadError) {
        let descriptor = openReadOnly(path)
        guard descriptor >= 0 else { throw ReadError.io(path: path, errnoText()) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let message = errnoText()
            close(descriptor)
            throw ReadError.io(path: path, message)
        }
        self.path = path
        self.descriptor = descriptor
        size = Int64(info.st_size)
    }

    deinit { close(descriptor) }

    /// Throws `ReadError.io` with the system's words when a `pread` fails.
    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws -> Int {
        let count = readFully(descriptor, buffer, at: offset)
        guard count >= 0 else { throw ReadError.io(path: path, errnoText()) }
        return count
    }
}
