import Foundation
import PkgKitSupport

/// `HTTPTransport` for `file://` URLs: a published folder on a local disk or a mounted share
/// answers like a web server that honours Range (200, 206, 404, 416), so that downloading,
/// resuming and checking work the same way for both.
public struct LocalFileTransport: HTTPTransport {
    /// Bytes handed over at a time.
    public static let chunkSize = 256 << 10

    /// A transport for local files.
    public init() {}

    /// Opens the file at `request.url`: 200 with the whole file, 206 with a range, 404 when it
    /// is missing or not a regular file, 403 when it may not be read, 416 when the range starts
    /// past its end. The body is read from the file as it is consumed.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        guard request.url.isFileURL else { throw TransportError.unsupportedURL(request.url.absoluteString) }
        try Task.checkCancellation()
        let url = request.url.absoluteString
        let status = { (code: Int) in HTTPResponse(head: HTTPResponseHead(statusCode: code, contentLength: 0), body: .empty) }
        let fd = open(request.url.path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            switch errno {
            case ENOENT, ENOTDIR: return status(404)
            case EACCES, EPERM: return status(403)
            default: throw TransportError.failed(url: url, errnoText())
            }
        }
        let file = OpenFile(fd)
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw TransportError.failed(url: url, errnoText()) }
        guard info.st_mode & S_IFMT == S_IFREG else { return status(404) }
        let size = Int64(info.st_size)
        var range: Range<Int64> = 0 ..< size
        var head = HTTPResponseHead(statusCode: 200, contentLength: size)
        if let wanted = request.range {
            guard wanted.lowerBound < size else { return status(416) }
            range = wanted.lowerBound ..< min(wanted.upperBound ?? size, size)
            head = HTTPResponseHead(statusCode: 206, contentLength: Int64(range.count),
                                    contentRange: ContentRange(first: range.lowerBound, last: range.upperBound - 1, total: size))
        }
        let reader = FileBodyReader(file: file, range: range, url: url)
        return HTTPResponse(head: head, body: HTTPBody(next: { try reader.next() }, cancel: { file.release() }))
    }
}

/// A descriptor closed once, by whoever is first: the end of the body, a cancel, or the last
/// reference going away.
private final class OpenFile: Sendable {
    /// The descriptor, -1 once closed.
    private let descriptor: LockedValue<Int32>

    init(_ descriptor: Int32) { self.descriptor = LockedValue(descriptor) }

    /// Runs `body` with the descriptor, or returns nil once it is closed.
    func use<T>(_ body: (Int32) throws -> T) rethrows -> T? {
        try descriptor.withLock { descriptor in descriptor >= 0 ? try body(descriptor) : nil }
    }

    /// Closes the descriptor, unless it is closed already.
    func release() {
        descriptor.withLock { descriptor in
            if descriptor >= 0 { _ = close(descriptor) }
            descriptor = -1
        }
    }

    deinit { release() }
}

/// Reads a file's range chunk by chunk, on demand.
private final class FileBodyReader: Sendable {
    private let file: OpenFile
    private let range: Range<Int64>
    private let url: String
    /// The next byte to read (only the one task reading the body moves it).
    private let position: LockedValue<Int64>

    init(file: OpenFile, range: Range<Int64>, url: String) {
        self.file = file
        self.range = range
        self.url = url
        position = LockedValue(range.lowerBound)
    }

    func next() throws -> Data? {
        try Task.checkCancellation()
        let position = self.position.current
        guard position < range.upperBound else {
            file.release()
            return nil
        }
        let want = Int(min(Int64(LocalFileTransport.chunkSize), range.upperBound - position))
        var chunk = Data(count: want)
        let got = file.use { fd in chunk.withUnsafeMutableBytes { readFully(fd, $0, at: position) } }
        guard let got else { throw CancellationError() }
        guard got >= 0 else { throw TransportError.failed(url: url, errnoText()) }
        guard got == want else { throw TransportError.connectionLost(url: url, "the file shrank while it was read") }
        self.position.withLock { $0 += Int64(got) }
        return chunk
    }
}
