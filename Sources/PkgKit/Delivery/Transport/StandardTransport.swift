import Foundation

/// The transport for any catalog or package URL: `file://` URLs are read from disk,
/// `http://` and `https://` go through one `URLSessionTransport`.
public struct StandardTransport: HTTPTransport {
    /// The HTTP(S) transport.
    public let http: URLSessionTransport
    /// The local file transport.
    public let files: LocalFileTransport

    /// A transport whose HTTP side uses `configuration`.
    public init(configuration: URLSessionTransport.Configuration = URLSessionTransport.Configuration()) {
        http = URLSessionTransport(configuration: configuration)
        files = LocalFileTransport()
    }

    /// Hands `request` to the transport for its URL's scheme.
    public func get(_ request: HTTPRequest,
                    onResponse: @escaping @Sendable (HTTPResponseHead) throws -> Void,
                    onBody: @escaping @Sendable (Data) throws -> Void) async throws -> HTTPResponseHead {
        switch request.url.scheme?.lowercased() {
        case "file": return try await files.get(request, onResponse: onResponse, onBody: onBody)
        case "http", "https": return try await http.get(request, onResponse: onResponse, onBody: onBody)
        default: throw TransportError.unsupportedURL(request.url.absoluteString)
        }
    }
}
