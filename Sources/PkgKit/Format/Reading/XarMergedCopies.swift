import Foundation

/// Recognises what libarchive's xar writer makes of a path given twice (`bsdtar -cf x.xar a a`):
/// one `<file>` whose `<length>` counts the compressed data once per copy, while the heap holds
/// one zlib stream of that size (3.6.2 writes the second copy nowhere, so the archive also looks
/// truncated). libarchive's reader then spins or reports truncation; pkgtool names the duplicate.
package enum XarMergedCopies {
    /// The most data examined: the check reads the entry's stored bytes once more.
    static let maxLength: Int64 = 64 << 20

    /// How many copies a declared length counts, when it is an exact multiple (≥ 2) of the bytes
    /// its first zlib stream took; nil when the data is plain corruption.
    package static func copies(declaredLength length: Int64, firstStream consumed: Int64) -> Int? {
        guard consumed > 0, length % consumed == 0, length / consumed >= 2 else { return nil }
        return Int(length / consumed)
    }

    /// The diagnosis of a merged entry.
    package static func failure(path: String?, copies: Int) -> ReadError {
        .duplicateEntry(path: path, "this path was stored \(copies) times in one entry (libarchive's xar writer does this when given a path twice): give each path once and rebuild the package")
    }

    /// How many copies the declared length of `path` counts, when it is an exact multiple (≥ 2)
    /// of the first complete zlib stream stored there; nil when the data is plain corruption.
    package static func copies(archive: String, path: String) -> Int? {
        guard let file = try? PackageFile(path: archive),
              let toc = try? XarTableOfContents.read(file), let data = toc.entry(path),
              data.encoding == "application/x-gzip", let length = data.length, let offset = data.offset,
              length > 0, length <= maxLength, offset >= 0,
              case let (start, overflow) = toc.heapStart.addingReportingOverflow(offset), !overflow else { return nil }
        // libarchive 3.6.2 writes the second copy nowhere: what is there of the data is read.
        var stored = Data(count: Int(length))
        let count = stored.withUnsafeMutableBytes { try? file.readChecked(into: $0, at: start) } ?? 0
        guard let first = ZlibStream.inflateFirst(stored.prefix(count), keepOutput: false)?.consumed else { return nil }
        return copies(declaredLength: length, firstStream: Int64(first))
    }
}
