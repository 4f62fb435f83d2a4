import Foundation
import PkgKitSupport
import PkgKitFormat
import PkgKitInstall

/// Content an app already has, to be adopted as an installed version (`SyncClient.adopt`): what
/// StoreKit's `SKDownload.contentURL` held (a folder with `ContentInfo.plist` beside `Contents/`),
/// or the `Contents/` tree alone, as an app that copied it elsewhere keeps it.
///
/// It is only read: its files are copied into the product folder, where a delta update takes
/// those the version's table of contents vouches for (by their sha1, never by name or size) and
/// fetches the rest. Links and anything neither a file nor a folder are left out, never followed.
struct AdoptedFolder {
    /// The folder that stands for `Contents/`.
    var contents: String
    /// The `ContentInfo.plist` beside it, when there is one.
    var contentInfo: ParsedContentInfo?

    /// The folder at `path`: its `Contents/` when a `ContentInfo.plist` lies beside it (a
    /// download's layout), else the folder itself. Throws `ReadError.io` when it is not a folder.
    static func locate(_ path: String) throws -> AdoptedFolder {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
            throw ReadError.io(path: path, "no such folder: give the folder that holds the content (Contents/ and ContentInfo.plist)")
        }
        guard isFolder.boolValue else { throw ReadError.io(path: path, "not a folder") }
        let plist = path + "/" + ContentInfo.fileName, contents = path + "/Contents"
        var contentsIsFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: contents, isDirectory: &contentsIsFolder), contentsIsFolder.boolValue,
              let data = FileManager.default.contents(atPath: plist) else {
            return AdoptedFolder(contents: path, contentInfo: nil)
        }
        guard data.count <= PackageLimits.maxContentInfoBytes else { throw ReadError.io(path: plist, "too large for a ContentInfo.plist") }
        return AdoptedFolder(contents: contents, contentInfo: ParsedContentInfo(data: data))
    }

    /// Copies every folder and regular file below `contents` into the new folder `name` of
    /// `product` (files 0644, as installed files are). `room` is given the bytes to copy first,
    /// and throws when the disk has no room for them: then nothing is copied.
    func copy(into product: ProductFolder, name: String, room: (Int64) throws -> Void, cancellation: Cancellation?) throws {
        let source = open(contents, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard source >= 0 else { throw ReadError.io(path: contents, errnoText()) }
        defer { close(source) }
        try room(Self.bytes(source, path: contents))
        try checkCall(mkdirat(product.descriptor, name, 0o755), product.path(name))
        let target = openat(product.descriptor, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard target >= 0 else { throw InstallError.io(path: product.path(name), errnoText()) }
        defer { close(target) }
        try Self.copyTree(source, path: contents, into: target, targetPath: product.path(name), cancellation: cancellation)
    }

    /// The bytes of every regular file below the open folder `dir`.
    private static func bytes(_ dir: Int32, path: String) throws -> Int64 {
        var total: Int64 = 0
        for name in try listNames(dir, path: path) {
            var info = stat()
            guard fstatat(dir, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { throw ReadError.io(path: path + "/" + name, errnoText()) }
            switch info.st_mode & S_IFMT {
            case S_IFREG: total += Int64(info.st_size)
            case S_IFDIR:
                let child = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                guard child >= 0 else { throw ReadError.io(path: path + "/" + name, errnoText()) }
                defer { close(child) }
                total += try bytes(child, path: path + "/" + name)
            default: continue
            }
        }
        return total
    }

    /// Copies the folders and regular files below the open folder `source` into the open folder `target`.
    private static func copyTree(_ source: Int32, path: String, into target: Int32, targetPath: String, cancellation: Cancellation?) throws {
        for name in try listNames(source, path: path) {
            try cancellation?.check()
            var info = stat()
            guard fstatat(source, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { throw ReadError.io(path: path + "/" + name, errnoText()) }
            switch info.st_mode & S_IFMT {
            case S_IFDIR:
                try checkCall(mkdirat(target, name, 0o755), targetPath + "/" + name)
                let from = openat(source, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                guard from >= 0 else { throw ReadError.io(path: path + "/" + name, errnoText()) }
                defer { close(from) }
                let to = openat(target, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                guard to >= 0 else { throw InstallError.io(path: targetPath + "/" + name, errnoText()) }
                defer { close(to) }
                try copyTree(from, path: path + "/" + name, into: to, targetPath: targetPath + "/" + name, cancellation: cancellation)
            case S_IFREG:
                try copyFile(source, name, path: path + "/" + name, into: target, targetPath: targetPath + "/" + name)
            default:
                // A link or a special file is no file of a package's Contents/ that a delta could reuse.
                continue
            }
        }
    }

    /// Copies the regular file `name` of the open folder `source` into the open folder `target`, 0644.
    private static func copyFile(_ source: Int32, _ name: String, path: String, into target: Int32, targetPath: String) throws {
        let input = openat(source, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard input >= 0 else { throw ReadError.io(path: path, errnoText()) }
        defer { close(input) }
        let output = openat(target, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard output >= 0 else { throw InstallError.io(path: targetPath, errnoText()) }
        defer { close(output) }
        // Installed files are 0644, and only such a file is linked into the new version, not copied again.
        fchmod(output, 0o644)
        guard try copyContents(input, to: output, target: targetPath) else { throw ReadError.io(path: path, errnoText()) }
    }
}
