
/// The bounds every reader enforces, so that no declared value in an archive can make pkgtool
/// use unbounded memory or time.
public struct PackageLimits: Sendable {
    /// The largest archive file and the largest total unpacked payload (2 GiB).
    public var maxSize: Int64
    /// The most entries a package may hold.
    public var maxEntries: Int = 1_000_000
    /// The longest path accepted (bytes).
    public static let maxPathBytes = 1024
    /// The longest path component accepted (bytes).
    public static let maxComponentBytes = 255
    /// The largest ContentInfo.plist read into memory.
    public static let maxContentInfoBytes = 1 << 20
    /// The default size limit: 2 GiB.
    public static let defaultMaxSize: Int64 = 2_147_483_648

    public init(maxSize: Int64 = PackageLimits.defaultMaxSize) {
        self.maxSize = maxSize
    }
}
