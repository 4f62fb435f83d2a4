import Foundation
import PkgKitSupport
import PkgKitInstall

/// A private folder in the system's temporary folder, removed with everything in it: where a
/// check keeps the header and TOC it fetches, since it writes nothing into Documents.
final class ScratchFolder {
    /// The name of the package's sparse copy in it.
    static let copyName = "toc.part"

    package let path: String
    package let descriptor: Int32

    package init() throws {
        var template = Array((NSTemporaryDirectory() + "/pkgkit-check-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw InstallError.io(path: NSTemporaryDirectory(), "cannot create a scratch folder: \(errnoText())") }
        path = String(cString: made)
        descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let problem = errnoText()
            rmdir(path)
            throw InstallError.io(path: path, problem)
        }
    }

    /// The path of `name` in the folder.
    package func path(_ name: String) -> String { path + "/" + name }

    /// Removes the folder and what it holds.
    package func remove() {
        for name in (try? listNames(descriptor, path: path)) ?? [] { try? removeTree(descriptor, name: name) }
        close(descriptor)
        rmdir(path)
    }
}
