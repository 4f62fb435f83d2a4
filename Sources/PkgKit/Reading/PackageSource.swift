/// Where a package is read from, once per pass: a file or folder on disk, or (for a delta update)
/// a partial download completed by files already installed.
struct PackageSource: Sendable {
    /// The package's path, for reports and messages.
    var path: String
    /// Opens a fresh reader over the whole package.
    var open: @Sendable (PackageLimits) throws -> PackageOpener.Opened

    /// A package file or unpacked folder, opened by `PackageOpener`.
    static func file(_ path: String) -> PackageSource {
        PackageSource(path: path) { limits in try PackageOpener.open(path, limits: limits) }
    }
}
