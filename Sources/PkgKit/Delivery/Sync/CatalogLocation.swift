import Foundation

/// Where a catalog is, from what a user typed (`sync SOURCE`).
public enum CatalogLocation {
    /// The catalog's URL for `source`: an `http(s)://` URL as it is (one ending in `/` gets
    /// `catalog.json` added); a `file://` URL or a local path likewise, where a folder means
    /// the `catalog.json` in it. Relative paths count from `directory`.
    public static func url(for source: String,
                           relativeTo directory: String = FileManager.default.currentDirectoryPath) throws(TransportError) -> URL {
        let lowered = source.lowercased()
        if lowered.hasPrefix("http://") || lowered.hasPrefix("https://") {
            guard let url = URL(string: source), !(url.host ?? "").isEmpty else { throw TransportError.unsupportedURL(source) }
            return source.hasSuffix("/") ? url.appendingPathComponent(Catalog.fileName) : url
        }
        var path = source
        if lowered.hasPrefix("file://") {
            guard let url = URL(string: source), url.isFileURL else { throw TransportError.unsupportedURL(source) }
            path = url.path
        } else if let colon = source.firstIndex(of: ":"), source[..<colon].allSatisfy({ $0.isLetter }),
                  source.distance(from: source.startIndex, to: colon) > 1 {
            throw TransportError.unsupportedURL(source)
        }
        if !path.hasPrefix("/") { path = (directory.hasSuffix("/") ? directory : directory + "/") + path }
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue {
            return URL(fileURLWithPath: path, isDirectory: true).appendingPathComponent(Catalog.fileName)
        }
        return URL(fileURLWithPath: path, isDirectory: false)
    }
}
