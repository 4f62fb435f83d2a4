
/// How `create` encodes file data.
public enum CompressionMode: String, Sendable, CaseIterable, Codable {
    /// zlib, but data that does not shrink (JPEG, PNG, video, zip…) is stored.
    case auto
    /// zlib for every file.
    case zlib
    /// Everything stored.
    case none
}

/// How one file's data sits in the package.
public enum DataEncoding: String, Sendable, Codable {
    /// A zlib stream (`application/x-gzip` in a xar TOC, deflate in zip).
    case zlib
    /// The bytes as they are.
    case stored

    /// The xar TOC's name for it.
    var xarStyle: String { self == .zlib ? "application/x-gzip" : "application/octet-stream" }
}
