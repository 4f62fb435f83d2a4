#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Makes the folder `path` and every missing folder above it (as `mkdir -p`, mode 0755): every
/// command creates the missing parents of an output path it was given (SPEC section 3), such as
/// `publish --to a/b/c` or `keygen --out keys/dir/name`.
///
/// Throws `PublishError` (`io-error`) naming the folder that cannot be made (read-only file
/// system, no permission), or the file that stands where a folder must be.
func makeFolders(_ path: String) throws(PublishError) {
    var info = stat()
    if stat(path, &info) == 0 {
        guard info.st_mode & S_IFMT == S_IFDIR else { throw PublishError(path: path, "is a file, not a folder") }
        return
    }
    // ENOTDIR: a file stands somewhere above; the parent that is one is found going up.
    guard errno == ENOENT || errno == ENOTDIR else { throw PublishError(path: path, "cannot be reached: \(errnoText())") }
    let parent = AtomicFile.directory(of: path)
    if parent != path && parent != "." && parent != "/" { try makeFolders(parent) }
    guard mkdir(path, 0o755) == 0 || errno == EEXIST else {
        throw PublishError(path: path, "cannot create the folder: \(errnoText())")
    }
}
