
/// How a `productbuild`/`pkgbuild` flat installer package is told from a content package: by the
/// names of its members, so that the outer xar is read once.
public enum InstallerPackageLayout {
    /// Top-level member names that only installer packages have.
    static let installerMembers: Set<String> = ["Distribution", "Resources", "PackageInfo", "Bom", "Payload", "Scripts"]

    /// True when a member at `path` is a component package's Payload.
    public static func isPayload(_ path: ArchivePath) -> Bool {
        let parts = path.string.split(separator: "/")
        return (parts.count == 1 && parts[0] == "Payload") || (parts.count == 2 && parts[0].hasSuffix(".pkg") && parts[1] == "Payload")
    }

    /// True when the first member of a xar says it is an installer package rather than content
    /// (whose first member is ContentInfo.plist or Contents). Deciding on the first member lets a
    /// package be read in one pass: either xar reader parses the whole TOC before the first member.
    public static func startsInstallerPackage(_ first: ArchivePath) -> Bool {
        let top = first.topLevel
        return installerMembers.contains(top) || top.hasSuffix(".pkg")
    }
}
