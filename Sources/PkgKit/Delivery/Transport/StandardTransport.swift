import Foundation

/// The transport for any catalog or package URL: `file://` URLs are read from disk; `http://`
/// and `https://` go through `AsyncHTTPClientTransport` on Linux and `URLSessionTransport` on
/// Apple platforms (each is built on its platform only).
public struct StandardTransport: HTTPTransport {
    /// The HTTP(S) transport.
    public let http: any HTTPTransport
    /// The local file transport.
    public let files: LocalFileTransport

    /// The platform's HTTP transport beside the local file transport.
    public init() {
        #if os(Linux)
        http = AsyncHTTPClientTransport()
        #else
        http = URLSessionTransport()
        #endif
        files = LocalFileTransport()
    }

    /// The platform's HTTP transport, trusting the system's certificate authorities and
    /// `trust`'s (a staging server's private CA, an app's own), beside the local file transport.
    /// On Apple platforms `trust`'s certificates are anchors beside the system's in URLSession's
    /// server-trust evaluation (not yet run on a device); an added certificate never makes a
    /// server less checked.
    public init(trust: ServerTrust) {
        #if canImport(AsyncHTTPClient)
        http = AsyncHTTPClientTransport(trust: trust)
        #else
        http = URLSessionTransport(trust: trust)
        #endif
        files = LocalFileTransport()
    }

    /// Hands `request` to the transport for its URL's scheme.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        switch request.url.scheme?.lowercased() {
        case "file": return try await files.send(request)
        case "http", "https": return try await http.send(request)
        default: throw TransportError.unsupportedURL(request.url.absoluteString)
        }
    }
}
