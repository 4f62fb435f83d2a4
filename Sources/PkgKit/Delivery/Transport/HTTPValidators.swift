import Foundation
import PkgKitSupport

/// What identifies one version of a resource, as the server said it (`ETag`, `Last-Modified`),
/// sent back to ask whether it changed.
public struct HTTPValidators: Sendable, Equatable {
    /// The `ETag` header's value, quotes and `W/` included (sent back as `If-None-Match`).
    public var etag: String?
    /// The `Last-Modified` header's value (sent back as `If-Modified-Since`).
    public var lastModified: String?

    /// Validators with these values; nil when the server sent neither.
    public init?(etag: String?, lastModified: String?) {
        guard etag != nil || lastModified != nil else { return nil }
        self.etag = etag
        self.lastModified = lastModified
    }

    /// The conditional request headers: `If-None-Match` for an ETag, `If-Modified-Since` for a
    /// date (a server that knows both uses the ETag, RFC 9110 §13.2.2).
    public var requestHeaders: [(name: String, value: String)] {
        (etag.map { [("If-None-Match", $0)] } ?? []) + (lastModified.map { [("If-Modified-Since", $0)] } ?? [])
    }
}
