import PkgKitSupport
import PkgKitFormat
import PkgKitDiagnostics

/// The files of a xar package whose bytes no sha1 in its table of contents covers (other xar
/// writers may leave the checksums out). A client updating to such a package cannot check those
/// bytes on their own, so it downloads the package whole and checks the catalog's sha256: `publish`
/// warns (`missing-checksum`), and publishes it all the same.
struct ChecksumCoverage: Sendable, Equatable {
    /// Files with data and no sha1 checksum, and the first of them in document order.
    var uncovered = 0
    package var first: String?

    /// Reads the table of contents of the xar at `path` (not its data).
    package static func read(_ path: String) throws(XarTOCError) -> ChecksumCoverage {
        var coverage = ChecksumCoverage()
        _ = try XarTableOfContents.read(path, keepEntries: false) { entry in
            guard (entry.length ?? 0) > 0, !covered(entry) else { return }
            coverage.uncovered += 1
            if coverage.first == nil { coverage.first = String(decoding: entry.pathBytes, as: UTF8.self) }
        }
        return coverage
    }

    /// True when the entry carries a sha1 of its stored or unpacked bytes.
    private static func covered(_ entry: XarTableOfContents.Entry) -> Bool {
        (entry.archivedChecksum != nil && XarChecksumStyle(name: entry.archivedStyle) == .sha1)
            || (entry.extractedChecksum != nil && XarChecksumStyle(name: entry.extractedStyle) == .sha1)
    }

    /// The warning `publish` gives, or nil when every file is covered.
    package var diagnostic: Diagnostic? {
        guard uncovered > 0 else { return nil }
        let others = uncovered == 1 ? "" : " (\(uncovered) files have none)"
        return Diagnostic(.missingChecksum, path: first,
            "has no checksum in the table of contents\(others): devices will download this version whole, not only what changed; make it with pkgtool create")
    }
}
