import Crypto
import Foundation
import PkgKitSupport
import PkgKitDiagnostics
import PkgKitFormat
import PkgKitInstall

/// A changed file of a delta update rebuilt from chunks (see `ChunkTable`): those an installed
/// file of the product already holds (any file: a renamed, split or merged bundle shares chunks
/// with files of other names; `ChunkIndex` says where) are copied from it, the others inflated
/// from the ranges fetched into the sparse copy. Every chunk is checked against its digest as it
/// is written, and the whole file against the TOC's sha1, before the installer sees it; it then
/// installs as a reused file.
package struct ChunkAssembly: Sendable {
    /// The file's place in the TOC's document order, and its path.
    package var order: Int
    package var path: ArchivePath
    package var size: Int64
    package var sha1: SHA1Value
    package var table: ChunkTable
    package var gzip: Bool
    /// Where the first chunk's stored bytes are in the package.
    package var dataStart: Int64
    /// The installed version folder the shared chunks come from, and its files that hold them
    /// (paths below it).
    package var version: String
    package var bases: [String]
    /// Per chunk: where an installed file holds it (a position in `bases` and an offset), or nil
    /// when it is fetched.
    package var sources: [Source?]

    /// Where an installed file holds a chunk.
    package struct Source: Sendable, Equatable {
        package var base: Int
        package var offset: Int64
    }

    /// The plan for a file with chunk table `table` whose stored data starts at `fileStart` in
    /// the package, taking every chunk `index` knows (of the same length) from where it lies.
    package init(order: Int, path: ArchivePath, size: Int64, sha1: SHA1Value, table: ChunkTable, gzip: Bool, fileStart: Int64,
                 index: ChunkIndex) {
        (self.order, self.path, self.size, self.sha1, self.table, self.gzip) = (order, path, size, sha1, table, gzip)
        dataStart = fileStart + table.dataStart
        version = index.version
        var positions: [String: Int] = [:]
        var bases: [String] = []
        sources = table.chunks.map { chunk in
            guard index.parameters == table.parameters, let location = index.locate(chunk.digest), location.length == chunk.size else { return nil }
            let base = positions[location.path] ?? {
                bases.append(location.path)
                positions[location.path] = bases.count - 1
                return bases.count - 1
            }()
            return Source(base: base, offset: location.offset)
        }
        self.bases = bases
    }

    /// The package ranges of the chunks to fetch.
    package var fetchRanges: [Range<Int64>] {
        var ranges: [Range<Int64>] = []
        var at = dataStart
        for (index, source) in sources.enumerated() {
            let length = Int64(table.chunk(index).storedLength)
            if source == nil { ranges.append(at ..< at + length) }
            at += length
        }
        return ranges
    }

    /// How many chunks are fetched.
    var fetchedChunks: Int { sources.lazy.filter { $0 == nil }.count }

    /// Fetches the chunks at `indices` instead of copying them; returns their package ranges.
    package mutating func fetchInstead(_ indices: [Int]) -> [Range<Int64>] {
        let before = Set(fetchRanges)
        for index in indices where sources.indices.contains(index) { sources[index] = nil }
        return fetchRanges.filter { !before.contains($0) }
    }

    /// Writes the file as `name` into the folder `scratch` (named `scratchName` in `folder`) and
    /// returns it, to be reused as an installed file is. A fetched chunk or the whole file that
    /// does not match is refused (`ChunkMismatch`); copied chunks that an installed file no longer
    /// holds (it changed since it was cut) are named (`StaleChunks`), to be fetched instead, and
    /// nothing is left written; an installed file that is gone makes the plan void
    /// (`InstallError.packageChanged`).
    func assemble(from copy: SparseCopy, folder: ProductFolder, scratch: Int32, scratchName: String, name: String, url: String,
                  cancellation: Cancellation?) throws -> InstalledFile {
        // Each installed file that holds chunks, opened when first needed.
        var inputs = [Int32](repeating: -1, count: bases.count)
        defer { for fd in inputs where fd >= 0 { close(fd) } }
        func input(_ base: Int) throws -> Int32 {
            if inputs[base] < 0 {
                inputs[base] = openat(folder.descriptor, version + "/" + bases[base], O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
                guard inputs[base] >= 0 else {
                    throw InstallError.packageChanged("\(folder.path(version + "/" + bases[base])): the installed file is gone; run sync again")
                }
            }
            return inputs[base]
        }
        let outputPath = folder.path(scratchName + "/" + name)
        let output = openat(scratch, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard output >= 0 else { throw InstallError.io(path: outputPath, errnoText()) }
        defer { close(output) }
        fchmod(output, 0o644)
        // One byte more than the largest chunk: an inflated chunk that runs over shows.
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: table.parameters.maximumSize + 1, alignment: 16)
        defer { buffer.deallocate() }
        // A fetched zlib chunk behind a zlib header of its own; its length is bounded by the
        // table (`ChunkTable.maxStoredLength`), so this one buffer holds any of them.
        let zlibChunk = UnsafeMutableRawBufferPointer.allocate(byteCount: gzip ? 2 + ChunkTable.maxStoredLength(size: table.parameters.maximumSize) : 0,
                                                           alignment: 16)
        defer { zlibChunk.deallocate() }
        if gzip { (zlibChunk[0], zlibChunk[1]) = (0x78, 0x01) }
        let inflater = Inflater()
        var sha1 = Insecure.SHA1()
        var head: [UInt8] = []
        var stored = dataStart
        // Copied chunks an installed file no longer holds: once one is found, the others are
        // only checked, so that one more fetch brings them all.
        var stale: [Int] = []
        for (index, source) in sources.enumerated() {
            try cancellation?.check()
            let chunk = table.chunk(index)
            let count: Int
            if !stale.isEmpty && source == nil {
                stored += Int64(chunk.storedLength)
                continue
            }
            if let source {
                count = readFully(try input(source.base), UnsafeMutableRawBufferPointer(rebasing: buffer[0..<chunk.size]), at: source.offset)
            } else if gzip {
                let length = min(chunk.storedLength, zlibChunk.count - 2)
                let got = try copy.read(into: UnsafeMutableRawBufferPointer(rebasing: zlibChunk[2 ..< 2 + length]), at: stored)
                count = got < chunk.storedLength ? -1 : Self.inflate(UnsafeRawBufferPointer(rebasing: zlibChunk[0 ..< 2 + length]), with: inflater, into: buffer)
            } else {
                let length = min(chunk.storedLength, buffer.count - 1)
                let got = try copy.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0 ..< length]), at: stored)
                count = got < chunk.storedLength ? -1 : got
            }
            stored += Int64(chunk.storedLength)
            let data = UnsafeRawBufferPointer(rebasing: buffer[0..<max(count, 0)])
            var hasher = ChunkHasher()
            hasher.update(data)
            guard count == chunk.size, hasher.digest == chunk.digest else {
                if source != nil {
                    stale.append(index)
                    continue
                }
                throw ChunkMismatch(url: url, path: path, detail: "chunk \(index + 1) of \(sources.count) does not match its digest in the table of contents")
            }
            if !stale.isEmpty { continue }
            sha1.update(bufferPointer: data)
            if head.count < ExecutableFormat.headBytes { head += data.prefix(ExecutableFormat.headBytes - head.count) }
            try writeAll(output, data, path: outputPath)
        }
        guard stale.isEmpty else {
            unlinkat(scratch, name, 0)
            throw StaleChunks(chunks: [order: stale])
        }
        guard SHA1Value(sha1.finalize()) == self.sha1 else {
            throw ChunkMismatch(url: url, path: path, detail: "the file rebuilt from its chunks does not match its sha1 in the table of contents")
        }
        var info = stat()
        guard fstat(output, &info) == 0 else { throw InstallError.io(path: outputPath, errnoText()) }
        return InstalledFile(version: scratchName, relativePath: name, identity: FileIdentity(info), sha1: self.sha1,
                             executable: ExecutableFormat.detect(head))
    }

    /// A zlib chunk's bytes inflated on their own (the stream was fully flushed before it, so
    /// nothing before it is needed), given behind a zlib header of their own: at most
    /// `buffer.count` bytes; -1 when they do not inflate.
    private static func inflate(_ input: UnsafeRawBufferPointer, with inflater: Inflater, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        inflater.reset()
        inflater.supply(input)
        var produced = 0
        while produced < buffer.count {
            let (count, status) = inflater.inflate(into: UnsafeMutableRawBufferPointer(rebasing: buffer[produced...]))
            produced += count
            switch status {
            case .corrupt: return -1
            case .ended, .needsInput: return inflater.pendingInput == 0 ? produced : -1
            case .more: if count == 0 { return inflater.pendingInput == 0 ? produced : -1 }
            }
        }
        return produced
    }
}

/// Copied chunks that installed files no longer hold, by the order of the file being rebuilt
/// and the chunk's place in its table: an installed file changed after it was cut, and its
/// identity did not show it (an edit within the clock tick of the cut). They are fetched instead.
package struct StaleChunks: Error {
    package var chunks: [Int: [Int]]
}

/// A chunk fetched for a delta update, or the file rebuilt from chunks, is not what the table
/// of contents (signed through the catalog's `tocSHA256`) says: refused, nothing installed.
struct ChunkMismatch: Error, DiagnosableError {
    package var url: String
    package var path: ArchivePath
    package var detail: String

    package var disposition: ErrorDisposition { .refused }
    package var diagnostic: Diagnostic {
        Diagnostic(.checksumMismatch, path: path.description, "\(detail) (from \(url)): the server's package is not the one its catalog names; nothing was installed")
    }
}

extension ChunkAssembly {
    /// Rebuilds every file of `assemblies` into a new folder `scratchName` of `folder` (the caller
    /// removes it once the install is over), by their path in the package; throws `StaleChunks`
    /// naming the copied chunks of every file that installed files no longer hold.
    package static func assembleAll(_ assemblies: [ChunkAssembly], from copy: SparseCopy, folder: ProductFolder, scratchName: String,
                            url: String, cancellation: Cancellation?) throws -> [ArchivePath: InstalledFile] {
        guard mkdirat(folder.descriptor, scratchName, 0o700) == 0 || errno == EEXIST else {
            throw InstallError.io(path: folder.path(scratchName), errnoText())
        }
        let scratch = openat(folder.descriptor, scratchName, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard scratch >= 0 else { throw InstallError.io(path: folder.path(scratchName), errnoText()) }
        defer { close(scratch) }
        var files: [ArchivePath: InstalledFile] = [:]
        var stale: [Int: [Int]] = [:]
        for assembly in assemblies {
            do {
                files[assembly.path] = try assembly.assemble(from: copy, folder: folder, scratch: scratch, scratchName: scratchName,
                                                            name: String(assembly.order), url: url, cancellation: cancellation)
            } catch let error as StaleChunks {
                stale.merge(error.chunks) { $1 }
            }
        }
        // Every file rebuilt anew once the stale chunks are fetched: none is left written.
        guard stale.isEmpty else {
            for assembly in assemblies { unlinkat(scratch, String(assembly.order), 0) }
            throw StaleChunks(chunks: stale)
        }
        return files
    }
}
