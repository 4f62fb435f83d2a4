import ArgumentParser
import PkgKit
import PkgKitArchive

/// The `pkgtool` command: builds, checks and installs hosted In-App Purchase content packages.
@main
struct Pkgtool: ParsableCommand {
    /// The version lives in PkgKit, in one place.
    static let version = PkgKitVersion.current

    static let configuration = CommandConfiguration(
        commandName: "pkgtool",
        abstract: "Build, check and install hosted In-App Purchase content packages (.pkg).",
        discussion: """
        A content package holds ContentInfo.plist (ContentVersion, IAPProductIdentifier) and a \
        Contents/ folder. Exit status: 0 success, 1 invalid package or refused operation, \
        2 input unreadable or I/O error, 64 wrong usage.
        """,
        version: version,
        subcommands: [Create.self, Validate.self, Extract.self, Inspect.self, Diff.self, Convert.self]
    )

    static func main() {
        MemoryPolicy.apply()
        // zip, tar, flat installer packages and the zip writer come from libarchive.
        LibArchiveSupport.register()
        main(nil)
    }
}
