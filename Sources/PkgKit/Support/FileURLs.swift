import Foundation

/// The paths of the file URLs an app hands PkgKit (`URL.documentsDirectory`, a bundle's
/// resource): a URL of another scheme names no folder on this device, and passing one is a
/// programmer's error, stopped at once rather than written into a folder its path would name.
package enum FileURLs {
    /// The path of the file URL `url`, without its percent-encoding.
    package static func path(of url: URL) -> String {
        precondition(url.isFileURL, "PkgKit wants a file URL for a folder or package, not \(url.absoluteString)")
        var path = url.standardizedFileURL.withUnsafeFileSystemRepresentation { $0.map { String(cString: $0) } } ?? url.path
        while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        return path
    }
}
