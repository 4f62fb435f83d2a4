import Foundation
import PkgKitSupport
import PkgKitFormat
import PkgKitInstall

/// The chunks of an installed file, cut as the new package's chunk table says its new version
/// was cut (content-defined boundaries are the same wherever the two versions agree): where each
/// chunk's bytes start, by digest. A delta update copies the chunks the new version shares from
/// here and fetches only the others.
package struct InstalledChunks: Sendable {
    /// The installed version folder and the file's path below it.
    package var version: String
    package var relativePath: String
    /// The first offset of each chunk, by digest.
    package var offsets: [ChunkDigest: Int64]

    /// Cuts and hashes the file `relativePath` of version `version` in `folder`; nil when it cannot
    /// be read as a regular file (it is then no base: the new file is fetched whole).
    package static func index(_ folder: ProductFolder, version: String, relativePath: String, parameters: ChunkParameters,
                      cancellation: Cancellation?) throws -> InstalledChunks? {
        guard PathSafety.componentsAreNames(relativePath) else { return nil }
        let fd = openat(folder.descriptor, version + "/" + relativePath, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        var offsets: [ChunkDigest: Int64] = [:]
        offsets.reserveCapacity(Int(info.st_size) / parameters.averageSize + 1)
        var chunker = ContentDefinedChunker(parameters)
        var hasher = ChunkHasher()
        var position: Int64 = 0, chunkStart: Int64 = 0
        while true {
            try cancellation?.check()
            let count = readFully(fd, buffer, at: position)
            guard count >= 0 else { return nil }
            if count == 0 { break }
            var taken = 0
            while taken < count {
                let (piece, ends) = chunker.scan(UnsafeRawBufferPointer(rebasing: buffer[taken..<count]))
                hasher.update(UnsafeRawBufferPointer(rebasing: buffer[taken..<taken + piece]))
                taken += piece
                if ends {
                    if offsets[hasher.digest] == nil { offsets[hasher.digest] = chunkStart }
                    chunkStart = position + Int64(taken)
                    hasher = ChunkHasher()
                }
            }
            position += Int64(count)
        }
        if position > chunkStart, offsets[hasher.digest] == nil { offsets[hasher.digest] = chunkStart }
        return InstalledChunks(version: version, relativePath: relativePath, offsets: offsets)
    }
}
