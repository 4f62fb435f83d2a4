import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `HTTPTransport` for `file://` URLs: a published folder on a local disk or a mounted share
/// answers like a web server that honours Range (200, 206, 404, 416), so that downloading,
/// resuming and checking work the same way for both.
public struct LocalFileTransport: HTTPTransport {
    /// Bytes handed to `onBody` at a time.
    public static let chunkSize = 256 << 10

    /// A transport for local files.
    public init() {}

    /// Reads the file at `request.url`: 200 with the whole file, 206 with a range, 404 when it
    /// is missing or not a regular file, 416 when the range starts past its end.
    public func get(_ request: HTTPRequest,
                    onResponse: @escaping @Sendable (HTTPResponseHead) throws -> Void,
                    onBody: @escaping @Sendable (Data) throws -> Void) async throws -> HTTPResponseHead {
        guard request.url.isFileURL else { throw TransportError.unsupportedURL(request.url.absoluteString) }
        try Task.checkCancellation()
        let url = request.url.absoluteString
        let path = request.url.path
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            switch errno {
            case ENOENT, ENOTDIR: throw TransportError.status(404, url: url)
            case EACCES, EPERM: throw TransportError.status(403, url: url)
            default: throw TransportError.failed(url: url, errnoText())
            }
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw TransportError.failed(url: url, errnoText()) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw TransportError.status(404, url: url) }
        let size = Int64(info.st_size)
        var first: Int64 = 0, last = size - 1
        var head = HTTPResponseHead(statusCode: 200, contentLength: size, contentType: nil)
        if let range = request.range {
            guard range.first < size else { throw TransportError.status(416, url: url) }
            first = range.first
            last = min(range.last ?? size - 1, size - 1)
            head = HTTPResponseHead(statusCode: 206, contentLength: last - first + 1,
                                    contentRange: ContentRange(first: first, last: last, total: size))
        }
        let length = last - first + 1
        // The caller judges the head first, as over HTTP.
        try onResponse(head)
        guard length <= request.maximumBodyBytes else {
            throw TransportError.bodyTooLong(url: url, limit: request.maximumBodyBytes)
        }
        var buffer = [UInt8](repeating: 0, count: Self.chunkSize)
        var done: Int64 = 0
        while done < length {
            try Task.checkCancellation()
            let want = Int(min(Int64(buffer.count), length - done))
            let got = buffer.withUnsafeMutableBytes { readFully(fd, UnsafeMutableRawBufferPointer(rebasing: $0[0..<want]), at: first + done) }
            guard got >= 0 else { throw TransportError.failed(url: url, errnoText()) }
            guard got == want else {
                throw TransportError.connectionLost(url: url, "the file shrank while it was read")
            }
            try onBody(Data(buffer[0..<got]))
            done += Int64(got)
        }
        return head
    }
}
