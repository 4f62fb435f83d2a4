import Foundation
import PkgKitSupport

/// Makes the folder `path` and every missing folder above it (`createFolders`): every command
/// creates the missing parents of an output path it was given (docs/commands.md), such as
/// `publish --to a/b/c` or `keygen --out keys/dir/name`. Throws `PublishError` (`io-error`)
/// naming the folder that cannot be made, or the file that stands where a folder must be.
/// Returns the folders it created, outermost first.
@discardableResult
func makeOutputFolders(_ path: String) throws(PublishError) -> [String] {
    do {
        return try createFolders(path)
    } catch {
        throw PublishError(path: error.path, error.reason)
    }
}
