import Foundation

/// Why a folder could not be made: the folder (or the file standing where one must be) and why.
package struct FolderCreationError: Error, Sendable {
    package var path: String
    package var reason: String
}

/// Creates the folder `path` and whichever of its parents are missing (as `mkdir -p`, mode 0755);
/// returns the folders it created, outermost first, so that a caller that gives up can remove
/// them again. Every command creates the missing parents of an output path it was given (docs/commands.md
/// ).
@discardableResult
package func createFolders(_ path: String) throws(FolderCreationError) -> [String] {
    var missing: [String] = []
    var probe = path
    var info = stat()
    while !probe.isEmpty && probe != "/" && probe != "." {
        if stat(probe, &info) == 0 {
            // The folders go inside the deepest one that exists, which must be one.
            guard info.st_mode & S_IFMT == S_IFDIR else { throw FolderCreationError(path: probe, reason: "is a file, not a folder") }
            break
        }
        // ENOTDIR: a file stands somewhere above; going up finds it.
        guard errno == ENOENT || errno == ENOTDIR else { throw FolderCreationError(path: probe, reason: "cannot be reached: \(errnoText())") }
        missing.insert(probe, at: 0)
        guard let slash = probe.lastIndex(of: "/") else { break }
        probe = String(probe[..<slash])
    }
    for folder in missing where mkdir(folder, 0o755) != 0 && errno != EEXIST {
        throw FolderCreationError(path: folder, reason: "cannot create the folder: \(errnoText())")
    }
    return missing
}
