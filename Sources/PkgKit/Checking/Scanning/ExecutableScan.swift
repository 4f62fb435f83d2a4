import Foundation
import PkgKitSupport
import PkgKitFormat

/// Looks for executable code in the files `create` is about to pack, by their first bytes, on
/// several threads at once.
///
/// It is the part of `create`'s check that needs the files' data, and on many small files the
/// time goes to opening them: one file after another, that would be the largest single piece of
/// `create`, so the files are opened on every core at once.
package enum ExecutableScan {
    /// How many files one thread takes at a time.
    package static let blockSize = 256
    /// Bytes read from every file: one page, which tells every format apart; reading
    /// `ExecutableFormat.headBytes` of each would double what `create` reads of small files.
    package static let firstRead = 4096

    /// The formats found, by path; plain content is absent. The first file (in `items`' order)
    /// that cannot be read is thrown, as the scan reading them in order would.
    package static func run(_ items: [SourceItem], jobs: Int) throws -> [ArchivePath: ExecutableFormat] {
        let files = items.indices.filter { items[$0].kind == .file }
        let blocks = (files.count + blockSize - 1) / blockSize
        var found: [ArchivePath: ExecutableFormat] = [:]
        // Results come back in block order, so the first unreadable file is the one thrown.
        try OrderedWorkPool.run(count: blocks, jobs: jobs, window: jobs * 2, work: { block in
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: ExecutableFormat.headBytes, alignment: 16)
            defer { buffer.deallocate() }
            var formats: [(index: Int, format: ExecutableFormat)] = []
            for index in files[(block * blockSize)..<min((block + 1) * blockSize, files.count)] {
                if let format = try detect(items[index], buffer: buffer) { formats.append((index, format)) }
            }
            return formats
        }, consume: { _, formats in
            for (index, format) in formats where found[items[index].path] == nil { found[items[index].path] = format }
        })
        return found
    }

    /// One file's format, from its first `ExecutableFormat.headBytes` bytes.
    private static func detect(_ item: SourceItem, buffer: UnsafeMutableRawBufferPointer) throws -> ExecutableFormat? {
        switch item.origin {
        case .data(let bytes):
            return bytes.withUnsafeBytes { ExecutableFormat.detect(UnsafeRawBufferPointer(rebasing: $0.prefix(ExecutableFormat.headBytes))) }
        case .file, .walked:
            let path = item.sourcePath ?? []
            let descriptor = path.withCString { open($0, O_RDONLY | O_NOFOLLOW | O_CLOEXEC) }
            guard descriptor >= 0 else { throw ReadError.io(path: String(decoding: path, as: UTF8.self), errnoText()) }
            defer { close(descriptor) }
            // Every format shows in the first bytes, but a PE header may lie up to `headBytes` in:
            // only a file starting "MZ" is read further.
            var count = readFully(descriptor, UnsafeMutableRawBufferPointer(rebasing: buffer[0..<firstRead]), at: 0)
            if count == firstRead, buffer[0] == UInt8(ascii: "M"), buffer[1] == UInt8(ascii: "Z") {
                let rest = readFully(descriptor, UnsafeMutableRawBufferPointer(rebasing: buffer[firstRead...]), at: Int64(firstRead))
                count = rest < 0 ? rest : count + rest
            }
            guard count >= 0 else { throw ReadError.io(path: String(decoding: path, as: UTF8.self), errnoText()) }
            return ExecutableFormat.detect(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
        case .none:
            return nil
        }
    }
}
