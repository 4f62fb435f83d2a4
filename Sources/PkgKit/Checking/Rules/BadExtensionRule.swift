import PkgKitDiagnostics
import PkgKitFormat

/// `bad-extension`: a package file must be named `*.pkg`. Folders have no name to judge, and
/// installing is not uploading: `extract` (and `sync`, which installs as it does) take a `.zip`.
///
/// What to do depends on what the file is: a content package (xar) only needs its name changed,
/// but a zip, a tar or an installer package renamed `.pkg` would still be one that devices must
/// download whole, so for those the message says a `.pkg` has to be made from it.
public struct BadExtensionRule: Rule {
    public init() {}
    public func check(_ package: PackageFacts, _ context: RuleContext) -> [Diagnostic] {
        guard context.purpose != .extract, let name = package.archiveName, !name.hasSuffix(".pkg") else { return [] }
        let shown = "'\(PathDisplay.printable(name))'"
        let message: String
        switch (context.purpose, package.format) {
        case (.create, _):
            message = "\(shown) does not end in .pkg: a content package's file name ends in .pkg whatever its container; name the output *.pkg"
        case (_, .xar?):
            message = "\(shown) is a content package (xar) whose name does not end in .pkg: rename it to end in .pkg"
        case (_, .flatPackage?):
            message = "\(shown) is an installer package, not a content package (a .pkg file holding a xar archive): \(Self.makeOne)"
        case (_, let format?) where format == .zip || format == .tar:
            message = "\(shown) is a \(format.rawValue) archive, not a content package (a .pkg file holding a xar archive, which devices can read in part): \(Self.makeOne)"
        default:
            message = "\(shown) does not end in .pkg, and a content package is a .pkg file holding a xar archive"
        }
        return [Diagnostic(.badExtension, path: nil, message)]
    }

    /// The advice for an archive of another kind: renaming it would not make it a content
    /// package. A front end may add how to make one (its own command).
    public static let makeOne = "renaming it is not enough; make a .pkg from it"
}
