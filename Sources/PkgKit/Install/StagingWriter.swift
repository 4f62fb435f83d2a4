import Foundation
import PkgKitSupport
import PkgKitFormat
import PkgKitChecking

/// Writes the tree below `Contents/` into a staging folder as the scanner reads the package, so
/// that verifying and writing take one pass over the data.
///
/// It trusts nothing it is handed: the rules judge what was read only once the pass is over, so
/// every name is checked here too, every folder is opened without following links, every file is
/// created exclusively, and nothing is created outside the staging folder whatever the entries say.
package final class StagingWriter: EntrySink {
    private let tree: StagingTree
    private let path: String
    /// The product folder, where the reused files are found.
    private let product: Int32
    /// Files on hand in the product folder that stand in for entries whose data is withheld.
    private let reused: [ArchivePath: InstalledFile]
    private let productPath: String
    private var file: Int32 = -1
    private var filePath = ""
    /// Bytes written to the current file, and how many of them were already sent to the disk.
    private var fileWritten: Int64 = 0
    private var writeback = DiskWriteback()
    /// Flushes what every writer of this staging folder writes, in the background.
    package let flusher: BackgroundFlusher
    private var hardlinks: [(link: [String], target: [String])] = []
    private let linker: ReusedFileLinker
    /// Whether each new file needs `fchmod` to be 0644: not when the umask already leaves it so
    /// (one call less per file, a few per cent of a package of tiny files). Read once per writer;
    /// an app that changes its umask during an install is the one case this does not cover.
    private let setsFileMode = !FileCreationMask.keeps(0o644, under: FileCreationMask.current())

    /// The installed files linked into this staging folder, shared by its writers.
    let linked: LinkedFiles

    /// Creates the staging folder `name` inside the product folder (or, with `create: false`,
    /// opens it: another writer made it). Writers of one folder share the `flusher` and the
    /// `linked` files of the first.
    package init(product: Int32, name: String, productPath: String, reused: [ArchivePath: InstalledFile] = [:], create: Bool = true,
         flusher: BackgroundFlusher? = nil, linked: LinkedFiles? = nil) throws {
        path = productPath + "/" + name
        self.product = product
        self.reused = reused
        self.productPath = productPath
        if create { try checkCall(mkdirat(product, name, 0o755), path) }
        let root = openat(product, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard root >= 0 else { throw InstallError.io(path: path, errnoText()) }
        fchmod(root, 0o755)
        tree = StagingTree(root: root, path: path)
        self.linked = linked ?? LinkedFiles(reused: reused.values)
        linker = ReusedFileLinker(product: product, productPath: productPath, linked: self.linked)
        self.flusher = flusher ?? BackgroundFlusher(descriptor: root, scope: .fileSystem)
    }

    deinit {
        closeFile()
        tree.closeAll()
    }

    package func begin(_ entry: ArchiveEntry) throws {
        closeFile()
        tree.trim()
        guard let relative = entry.path.contentsRelative, !relative.isEmpty else { return }
        guard PathSafety.componentsAreNames(relative) else {
            throw InstallError.packageChanged("\(entry.path): unsafe path while installing")
        }
        let slash = relative.lastIndex(of: "/")
        let folder = slash.map { relative[..<$0] } ?? ""
        let name = String(slash.map { relative[relative.index(after: $0)...] } ?? relative[...])
        switch entry.kind {
        case .directory:
            _ = try tree.directory(relative: relative[...])
        case .file where entry.dataWithheld:
            guard let file = reused[entry.path] else {
                throw InstallError.packageChanged("\(entry.path): its data was withheld and no installed file stands in for it")
            }
            let parent = try tree.directory(relative: folder)
            try linker.place(file, in: parent, name: name, shownAs: self.path + "/" + relative)
        case .file:
            let parent = try tree.directory(relative: folder)
            filePath = path + "/" + relative
            file = openat(parent, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
            guard file >= 0 else { throw InstallError.io(path: filePath, errnoText()) }
            fileWritten = 0
            writeback = DiskWriteback()
            flusher.wrote(Self.fileCost)
            // The umask must not decide a content file's mode.
            if setsFileMode { fchmod(file, 0o644) }
        case .symlink:
            let parent = try tree.directory(relative: folder)
            try checkCall(symlinkat(String(decoding: entry.linkTarget ?? [], as: UTF8.self), parent, name), path + "/" + relative)
        case .hardlink:
            if let target = entry.hardlinkTarget?.contentsRelative {
                hardlinks.append((relative.split(separator: "/").map(String.init), target.split(separator: "/").map(String.init)))
            }
        default:
            throw InstallError.packageChanged("\(entry.path): a \(entry.kind.rawValue) cannot be installed")
        }
    }

    package func write(_ chunk: UnsafeRawBufferPointer) throws {
        guard file >= 0 else { return }
        try writeAll(file, chunk, path: filePath)
        fileWritten += Int64(chunk.count)
        // Large files go to the disk in steps while they are written: the final `syncfs` then
        // finds most of the data written already.
        writeback.start(file, written: fileWritten)
        flusher.wrote(Int64(chunk.count))
    }

    /// What creating a file counts for towards the next background flush, beyond its bytes: the
    /// flush writes its inode and folder entry too, so a package of many tiny files, whose bytes
    /// alone would hardly count, still has its flushes keep pace with the writing.
    package static let fileCost: Int64 = 4 << 10

    /// Files at least this large are sent to the disk as soon as they are closed (every byte not
    /// sent yet). Smaller ones are left to the final `syncfs`, which sends them in one batch for
    /// less than one call each would cost.
    static let writebackMinimum: Int64 = 256 << 10

    package func end() throws {
        closeFile()
    }

    /// Links the hard links (their targets exist by now) and makes everything durable at once.
    package func finish() throws {
        try linkHardlinks()
        try sync()
    }

    /// Makes everything written in the staging folder (by any writer) durable, in one batch.
    package func sync() throws {
        try tree.syncAll()
        flusher.wait()
    }

    /// Links the hard links this writer was handed; every file must be written by now.
    package func linkHardlinks() throws {
        closeFile()
        for (link, target) in hardlinks {
            tree.trim()
            guard target.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." }) else {
                throw InstallError.packageChanged("hard link to an unsafe path while installing")
            }
            let from = try tree.directory(Array(target.dropLast()), create: false)
            let to = try tree.directory(Array(link.dropLast()))
            try checkCall(linkat(from, target.last!, to, link.last!, 0), path + "/" + link.joined(separator: "/"))
        }
    }

    private func closeFile() {
        if file >= 0 {
            if fileWritten >= Self.writebackMinimum { writeback.start(file, written: fileWritten, minimum: 1) }
            close(file)
        }
        file = -1
    }
}
