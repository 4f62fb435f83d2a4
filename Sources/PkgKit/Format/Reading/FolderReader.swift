import Foundation
import PkgKitSupport

/// Reads an unpacked package (ContentInfo.plist + Contents/) or any list of `SourceItem`s,
/// opening each file only while its data is read and never following a link.
public final class FolderReader: PackageReader {
    public let format: PackageFormat = .folder
    private let items: [SourceItem]
    private var index = -1
    private var descriptor: Int32 = -1
    private var memoryOffset = 0
    private var delivered: Int64 = 0
    private lazy var total: Int64 = items.reduce(0) { $0 + ($1.kind == .file ? $1.size : 0) }
    /// Opens each file, through its folder's descriptor when the caller shares one.
    private let opener: SourceFileOpener

    public var progress: (done: Int64, total: Int64) { (delivered, total) }

    /// Reads the items in order.
    public convenience init(items: [SourceItem]) {
        self.init(items: items, opener: SourceFileOpener())
    }

    /// Reads the items in order, opening files with `opener` (one reader at a time may use it).
    package init(items: [SourceItem], opener: SourceFileOpener) {
        self.items = items
        self.opener = opener
    }

    /// Reads the folder at `root` as a package root.
    public convenience init(root: String, limits: PackageLimits = PackageLimits()) throws {
        self.init(items: try FolderWalker.walk(root: Array(root.utf8), limits: limits))
    }

    deinit { closeCurrent() }

    /// A reader of the same items from the start.
    func rewound() -> FolderReader { FolderReader(items: items) }

    public func nextEntry() throws -> ArchiveEntry? {
        closeCurrent()
        index += 1
        guard index < items.count else { return nil }
        let item = items[index]
        memoryOffset = 0
        return ArchiveEntry(path: item.path, kind: item.kind, mode: item.mode,
                            declaredSize: item.kind == .file ? item.size : nil, linkTarget: item.linkTarget)
    }

    public func readData(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard index < items.count, items[index].kind == .file else { return 0 }
        switch items[index].origin {
        case .data(let bytes):
            let count = min(buffer.count, bytes.count - memoryOffset)
            if count > 0 {
                bytes.withUnsafeBytes { source in
                    buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[memoryOffset..<(memoryOffset + count)]))
                }
            }
            memoryOffset += count
            delivered += Int64(count)
            return count
        case .file, .walked:
            let path = { String(decoding: self.items[self.index].sourcePath ?? [], as: UTF8.self) }
            if descriptor < 0 {
                descriptor = opener.open(items[index].sourcePath ?? [])
                guard descriptor >= 0 else { throw ReadError.io(path: path(), errnoText()) }
            }
            let count = readRetrying(descriptor, buffer)
            guard count >= 0 else { throw ReadError.io(path: path(), errnoText()) }
            delivered += Int64(count)
            return count
        case .none:
            return 0
        }
    }

    private func closeCurrent() {
        if descriptor >= 0 { close(descriptor) }
        descriptor = -1
    }
}
