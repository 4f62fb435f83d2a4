import Foundation

/// The container `create` writes.
public enum OutputFormat: String, Sendable, CaseIterable, Codable {
    case xar
    case zip
}

/// Everything that shapes the bytes of a package besides its content.
public struct WriteOptions: Sendable {
    /// xar or zip.
    public var format: OutputFormat = .xar
    /// How file data is encoded.
    public var compression: CompressionMode = .auto
    /// Compression level, 1–9: higher is smaller and slower (`DeflateProfile` says which engine
    /// each level uses for which file).
    public var level: Int32 = WriteOptions.defaultLevel
    /// The default level, 5: packages no larger than bsdtar's (zlib level 6) of the same files,
    /// in about a quarter of its time.
    public static var defaultLevel: Int32 { DeflateProfile.defaultLevel }
    /// Worker threads for compression (output is identical for every value).
    public var jobs: Int = 1
    /// Every timestamp in the package: `SOURCE_DATE_EPOCH`, else 0.
    public var timestamp: Int64 = 0
    /// Whether a xar's large files carry chunk tables, so that a client holding an earlier
    /// version of a file can fetch only its changed parts.
    public var chunks = true
    /// Whether a xar stores identical files' bytes once, each entry pointing at them: smaller,
    /// but libarchive can then read the package only from a file it can seek in, not a pipe.
    public var coalesce = true

    public init(format: OutputFormat = .xar, compression: CompressionMode = .auto, level: Int32 = WriteOptions.defaultLevel, jobs: Int = 1, timestamp: Int64 = 0) {
        self.format = format
        self.compression = compression
        self.level = level
        self.jobs = jobs
        self.timestamp = timestamp
    }

    /// `SOURCE_DATE_EPOCH` from the environment when it is a whole number of seconds, else 0.
    public static func timestampFromEnvironment() -> Int64 {
        guard let text = getenv("SOURCE_DATE_EPOCH").map({ String(cString: $0) }), let value = Int64(text), value >= 0 else { return 0 }
        return value
    }
}

/// What was written for one file.
public struct WrittenFile: Sendable, Codable {
    /// Its path in the package.
    public var path: String
    /// Unpacked bytes.
    public var size: Int64
    /// Bytes in the package.
    public var storedSize: Int64
    /// zlib or stored.
    public var encoding: DataEncoding
    /// sha1 of the unpacked bytes.
    public var sha1: String

    /// The facts of one written file.
    public init(path: String, size: Int64, storedSize: Int64, encoding: DataEncoding, sha1: String) {
        self.path = path
        self.size = size
        self.storedSize = storedSize
        self.encoding = encoding
        self.sha1 = sha1
    }
}

/// The result of writing a package.
public struct WrittenPackage: Sendable {
    /// Every regular file, in package order.
    public var files: [WrittenFile]
    /// Size of the package file.
    public var archiveBytes: Int64
    /// sha256 of the package file, lowercase hex.
    public var sha256: String

    package init(files: [WrittenFile], archiveBytes: Int64, sha256: String) {
        self.files = files
        self.archiveBytes = archiveBytes
        self.sha256 = sha256
    }
}

/// A point in time as xar writes it: UTC, 20 characters with `Z` (libarchive accepts no other form).
func xarTimestamp(_ seconds: Int64, withZone: Bool = true) -> String {
    var time = time_t(seconds)
    var parts = tm()
    gmtime_r(&time, &parts)
    func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
    let year = String(parts.tm_year + 1900)
    let text = "\(year)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))"
    return withZone ? text + "Z" : text
}
