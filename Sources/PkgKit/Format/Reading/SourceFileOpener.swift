import Foundation
import PkgKitSupport

/// Opens source files by their full path (`SourceItem.sourcePath`) through a descriptor of their
/// folder, kept open for the next file: files come folder by folder, and walking every component
/// of a deep path again for each tiny file was a twentieth of `create`'s time. As `open` by path
/// does, it follows links in the folders and never in the file's own name. One per thread.
package final class SourceFileOpener {
    /// The folder of the last file opened, and its descriptor.
    private var folder: (path: [UInt8], descriptor: Int32)?

    /// An opener with no folder open yet.
    package init() {}

    deinit { closeFolder() }

    /// A read-only descriptor of the file at `path`, or -1 with `errno` set.
    package func open(_ path: [UInt8]) -> Int32 {
        let flags = O_RDONLY | O_NOFOLLOW | O_CLOEXEC
        guard let slash = path.lastIndex(of: UInt8(ascii: "/")), slash > 0, slash < path.count - 1 else {
            return path.withCString { Foundation.open($0, flags) }
        }
        let parent = path[..<slash]
        if folder.map({ $0.path[...] != parent }) ?? true {
            closeFolder()
            let descriptor = Array(parent).withCString { Foundation.open($0, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
            // A folder that cannot be opened: the whole path says why.
            guard descriptor >= 0 else { return path.withCString { Foundation.open($0, flags) } }
            folder = (Array(parent), descriptor)
        }
        return Array(path[(slash + 1)...]).withCString { openat(folder!.descriptor, $0, flags) }
    }

    private func closeFolder() {
        if let folder { close(folder.descriptor) }
        folder = nil
    }
}
