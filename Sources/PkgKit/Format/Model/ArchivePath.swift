import PkgKitDiagnostics

/// A path as stored in an archive: raw bytes (names need not be valid UTF-8) plus the
/// normalised form every reader agrees on (no leading `./`, no trailing `/`).
public struct ArchivePath: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The bytes of the normalised path.
    public let bytes: [UInt8]

    /// Normalises `raw`: strips every leading `./` (and a lone `.`) and trailing slashes.
    public init(raw: [UInt8]) {
        var start = 0
        while raw.count - start >= 2, raw[start] == UInt8(ascii: "."), raw[start + 1] == UInt8(ascii: "/") {
            start += 2
            while start < raw.count, raw[start] == UInt8(ascii: "/") { start += 1 }
        }
        var end = raw.count
        while end > start + 1, raw[end - 1] == UInt8(ascii: "/") { end -= 1 }
        var slice = Array(raw[start..<end])
        if slice == [UInt8(ascii: ".")] { slice = [] }
        bytes = slice
    }

    /// Makes a path from text already in normal form.
    public init(_ text: String) { self.init(raw: Array(text.utf8)) }

    /// The path as text, invalid UTF-8 replaced, for matching and display.
    public var string: String { String(decoding: bytes, as: UTF8.self) }

    /// The path for messages: control characters shown as `\xNN`.
    public var description: String { PathDisplay.printable(bytes) }

    /// True for the empty path (the archive root itself, `.` or `./`).
    public var isRoot: Bool { bytes.isEmpty }

    /// The `/`-separated components (empty ones kept, so `a//b` is visible to the rules).
    public var components: [ArraySlice<UInt8>] {
        bytes.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
    }

    /// The first component as text (`Contents`, `ContentInfo.plist`, …).
    public var topLevel: String {
        String(decoding: bytes.prefix { $0 != UInt8(ascii: "/") }, as: UTF8.self)
    }

    /// The last component as text.
    public var lastComponent: String {
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return string }
        return String(decoding: bytes[(slash + 1)...], as: UTF8.self)
    }

    /// True when the path lies below `Contents/` (not `Contents` itself).
    public var isInsideContents: Bool {
        // Compared as bytes: every rule asks, for every entry, and a String each time adds up.
        bytes.starts(with: Self.contentsPrefix)
    }

    private static let contentsPrefix = Array("Contents/".utf8)

    /// The path below `Contents/`, for install and diff output.
    public var contentsRelative: String? {
        isInsideContents ? String(string.dropFirst("Contents/".count)) : nil
    }

    public static func == (lhs: ArchivePath, rhs: ArchivePath) -> Bool { lhs.bytes == rhs.bytes }

    /// Hashes the bytes in one call: element by element costs more than the rules themselves.
    public func hash(into hasher: inout Hasher) {
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }

    public static func < (lhs: ArchivePath, rhs: ArchivePath) -> Bool {
        lhs.bytes.lexicographicallyPrecedes(rhs.bytes)
    }
}
