import PkgKit

/// Reads a `productbuild` or `pkgbuild` flat installer package: a xar whose component
/// `Payload` (gzip'd cpio) holds ContentInfo.plist and Contents/. The package root is the
/// Payload's root; the installer's own members (Distribution, Bom, PackageInfo) are not content.
final class FlatPackageReader: PackageReader {
    public let format: PackageFormat = .flatPackage
    private let outer: any PackageReader
    private var inner: LibArchiveReader?
    private var byteSource: ArchiveByteSource?
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
    private var finished = false
    private var pendingMember: ArchiveEntry?

    /// Reads on from `outer`, whose current member is `current`.
    init(outer: any PackageReader, current: ArchiveEntry) {
        self.outer = outer
        self.pendingMember = current
    }

    deinit { buffer.deallocate() }

    public func nextEntry() throws -> ArchiveEntry? {
        if finished { return nil }
        if inner == nil {
            while let member = try pendingMember.take() ?? outer.nextEntry() {
                guard InstallerPackageLayout.isPayload(member.path) else { continue }
                let source = ArchiveByteSource { [outer, buffer] in
                    let count = try outer.readData(into: buffer)
                    return count == 0 ? nil : UnsafeRawBufferPointer(rebasing: buffer[0..<count])
                }
                byteSource = source
                inner = try LibArchiveReader(source: .callback(source))
                break
            }
            guard inner != nil else {
                throw ReadError.unreadable(path: nil, "installer package without a Payload")
            }
        }
        do {
            while let entry = try inner!.nextEntry() {
                // cpio payloads start with the root folder itself, `.`.
                if entry.path.isRoot { continue }
                return entry
            }
        } catch {
            throw byteSource?.error ?? error
        }
        // Read the outer member to its end so that its xar checksum is verified.
        while try outer.readData(into: buffer) > 0 {}
        finished = true
        return nil
    }

    public var progress: (done: Int64, total: Int64) { outer.progress }

    public func readData(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        do {
            return try inner?.readData(into: buffer) ?? 0
        } catch {
            throw byteSource?.error ?? error
        }
    }
}
