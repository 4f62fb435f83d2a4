import Foundation
import PkgKitSupport
import PkgKitFormat

/// Reading and replacing the small files of a published folder (the catalog, signature files,
/// their record), each failure an `io-error` naming the file.
enum PublishedFile {
    /// The first `limit` bytes of `path`, or nil when there is no such file (nor a folder for it).
    package static func read(_ path: String, limit: Int) throws(PublishError) -> Data? {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            if access(path, F_OK) != 0 && (errno == ENOENT || errno == ENOTDIR) { return nil }
            throw PublishError(path: path, "cannot read: \(errnoText())")
        }
        defer { try? handle.close() }
        do {
            return try handle.read(upToCount: limit) ?? Data()
        } catch {
            throw PublishError(path: path, "cannot read: \(error)")
        }
    }

    /// Replaces `path` with `data` atomically: written aside, flushed, renamed into place.
    package static func write(_ data: Data, to path: String) throws(PublishError) {
        do {
            let file = try AtomicFile(destination: path)
            try data.withUnsafeBytes { try file.output.write($0) }
            try file.commit()
        } catch let error as WriteError {
            throw PublishError(path: path, describe(error))
        } catch {
            throw PublishError(path: path, "\(error)")
        }
    }

    /// A write failure in words, without the path (the diagnostic names it).
    package static func describe(_ error: WriteError) -> String {
        switch error {
        case .io(_, let message): return message
        case .compression(let message): return message
        case .sourceChanged(let path): return "\(path) changed while it was read"
        }
    }
}
