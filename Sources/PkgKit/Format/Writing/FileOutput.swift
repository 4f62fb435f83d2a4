#if os(Linux)
internal import CSyscalls
#endif
import Foundation
import PkgKitSupport

/// An open file written front to back, optionally hashing what passes through.
// Unchecked: owns a descriptor, used by the one worker that encodes into it, then handed whole to the consumer.
package final class FileOutput: @unchecked Sendable {
    package let descriptor: Int32
    package let path: String
    package private(set) var position: Int64 = 0
    /// How much of the file has been handed to the disk by `startWriteback`.
    private var writeback = DiskWriteback()
    /// Flushes the file in the background as `startWriteback` hands it to the disk.
    private lazy var flusher = BackgroundFlusher(descriptor: descriptor, scope: .file)
    /// How much of the file has been counted towards the next background flush.
    private var counted: Int64 = 0

    package init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    deinit { close(descriptor) }

    /// A file with no name in `directory`, gone when closed: scratch space that a crash cannot leave behind.
    package static func anonymous(in directory: String) throws -> FileOutput {
        #if os(Linux)
        let fd = open(directory, CSyscalls_O_TMPFILE | O_RDWR | O_CLOEXEC, 0o600)
        if fd >= 0 { return FileOutput(descriptor: fd, path: directory) }
        #endif
        var template = Array((directory + "/.pkgtool-scratch-XXXXXX").utf8CString)
        let fallback = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fallback >= 0 else { throw WriteError.io(path: directory, errnoText()) }
        let name = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        unlink(name)
        return FileOutput(descriptor: fallback, path: directory)
    }

    /// Writes every byte of `bytes`.
    package func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard writeFully(descriptor, bytes) else { throw WriteError.io(path: path, errnoText()) }
        position += Int64(bytes.count)
    }

    /// Writes an array's bytes.
    package func write(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try write($0) }
    }

    /// Reads `length` bytes at `offset` of this file into `sink`, in blocks of `buffer`'s size.
    package func copy(offset: Int64, length: Int64, buffer: UnsafeMutableRawBufferPointer, to sink: (UnsafeRawBufferPointer) throws -> Void) throws {
        var done: Int64 = 0
        while done < length {
            let want = Int(min(Int64(buffer.count), length - done))
            let got = readFully(descriptor, UnsafeMutableRawBufferPointer(rebasing: buffer[0..<want]), at: offset + done)
            guard got >= 0 else { throw WriteError.io(path: path, errnoText()) }
            guard got == want else { throw WriteError.io(path: path, "scratch file ended early") }
            try sink(UnsafeRawBufferPointer(rebasing: buffer[0..<got]))
            done += Int64(got)
        }
    }

    /// Appends `length` bytes of the file `source` from `offset`, inside the kernel where the
    /// system can (`copy_file_range`), else through `buffer`. Returns the bytes copied: fewer
    /// only when `source` ends first.
    package func append(from source: Int32, offset: Int64, length: Int64, buffer: UnsafeMutableRawBufferPointer, path sourcePath: String) throws -> Int64 {
        var done: Int64 = 0
        #if os(Linux)
        var inOffset = offset
        while done < length {
            let count = CSyscalls_copyFileRange(source, &inOffset, descriptor, Int(min(length - done, 1 << 30)))
            if count < 0 {
                if errno == EINTR { continue }
                // Not between these files (another file system, an old kernel): by hand below.
                guard done == 0, errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP else {
                    throw WriteError.io(path: path, errnoText())
                }
                break
            }
            if count == 0 { return done }
            done += Int64(count)
            position += Int64(count)
        }
        if done == length { return done }
        #endif
        while done < length {
            let want = Int(min(Int64(buffer.count), length - done))
            let got = readFully(source, UnsafeMutableRawBufferPointer(rebasing: buffer[0..<want]), at: offset + done)
            guard got >= 0 else { throw WriteError.io(path: sourcePath, errnoText()) }
            if got > 0 { try write(UnsafeRawBufferPointer(rebasing: buffer[0..<got])) }
            done += Int64(got)
            if got < want { break }
        }
        return done
    }

    /// Asks the kernel to start writing what was appended since the last call to the disk, once
    /// at least `DiskWriteback.step` bytes wait, without waiting for it, so that the flush at
    /// commit does not start the whole package's write-back and wait for it.
    package func startWriteback() {
        writeback.start(descriptor, written: position)
        flusher.wrote(position - counted)
        counted = position
    }

    /// Flushes the data to the device.
    package func flushToDevice() throws {
        guard fsync(descriptor) == 0 else { throw WriteError.io(path: path, errnoText()) }
        if counted > 0 { flusher.wait() }
    }

    /// How many background flushes `startWriteback` has started.
    package var backgroundFlushes: Int { counted > 0 ? flusher.flushesStarted : 0 }
}
