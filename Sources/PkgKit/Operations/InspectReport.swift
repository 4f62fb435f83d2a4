import Foundation

/// `inspect`'s report (SPEC section 5).
public struct InspectReport: Sendable, Codable {
    /// One entry in `--files`.
    public struct File: Sendable, Codable {
        public var path: String
        public var type: EntryKind
        public var size: Int64
        public var storedSize: Int64?
        public var sha1: String?

        public func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(path, forKey: .path)
            try c.encode(type, forKey: .type)
            try c.encode(size, forKey: .size)
            try c.encode(storedSize, forKey: .storedSize)
            try c.encode(sha1, forKey: .sha1)
        }
        enum CodingKeys: String, CodingKey { case path, type, size, storedSize, sha1 }
    }

    public var path: String
    public var format: PackageFormat?
    public var productIdentifier: String?
    public var contentVersion: String?
    /// `zlib`, `stored`, `mixed` (xar); the container's filter otherwise.
    public var compression: String?
    /// The checksum style (`sha1` for pkgtool's xar; `crc32` for zip).
    public var checksum: String?
    public var fileCount: Int
    public var payloadBytes: Int64
    public var archiveBytes: Int64?
    /// Every entry, with `--files`.
    public var files: [File]?

    /// Reads `path`. A xar content package is described from its table of contents alone, as
    /// `bsdtar -t` would list it (its data is not read, so nothing is verified: that is
    /// `validate`'s work); other packages are scanned, headers only unless `withFiles` asks for
    /// every file's sha1.
    public static func make(_ path: String, limits: PackageLimits = PackageLimits(), withFiles: Bool) throws -> InspectReport {
        if let report = fromXarTableOfContents(path, withFiles: withFiles) { return report }
        var opened = try PackageOpener.open(path, limits: limits)
        try PackageScanner(limits: limits, depth: withFiles ? .full : .headers).scan(opened.reader, into: &opened.facts)
        let facts = opened.facts
        let info = facts.parsedContentInfo
        var report = InspectReport(path: path, format: facts.format, productIdentifier: info?.productIdentifier,
                                   contentVersion: info?.contentVersion, compression: nil, checksum: nil,
                                   fileCount: facts.fileCount, payloadBytes: facts.payloadBytes, archiveBytes: facts.archiveBytes)
        switch facts.format {
        case .xar, .flatPackage:
            report.compression = facts.format == .flatPackage ? "gzip (cpio payload)" : nil
            report.checksum = XarTableOfContents.read(path)?.checksumStyle
        case .zip:
            report.compression = "zip"
            report.checksum = "crc32"
        case .tar:
            report.compression = "tar"
            report.checksum = "none"
        case .folder, nil:
            report.compression = "none"
            report.checksum = "none"
        }
        if withFiles {
            report.files = facts.entries.map { File(path: $0.path.string, type: $0.kind, size: $0.size, storedSize: nil, sha1: $0.sha1) }
        }
        return report
    }

    /// The sha1 of no bytes, which xar writers leave out of the TOC for empty files.
    static let emptySHA1 = "da39a3ee5e6b4b0d3255bfef95601890afd80709"

    /// The report from a xar content package's TOC, or nil when the TOC cannot answer (not a xar,
    /// an installer package, or `--files` without sha1 checksums in the TOC).
    static func fromXarTableOfContents(_ path: String, withFiles: Bool) -> InspectReport? {
        // Without --files nothing per entry is kept: counts and sums are taken as the TOC streams by.
        var first: String?
        var plist: XarTableOfContents.Entry?
        var fileCount = 0
        var payloadBytes: Int64 = 0
        var encodings: Set<String> = []
        var missingDigest = false
        guard let toc = XarTableOfContents.read(path, keepEntries: withFiles, visit: { entry in
            // Folders close after their contents, so the first entry seen lies inside (or is) the
            // first member; its top-level name is what tells an installer package.
            if first == nil { first = entry.path }
            guard entry.type == "file" else { return }
            let normal = ArchivePath(entry.path)
            if normal.string == ContentInfo.fileName { plist = entry }
            if normal.isInsideContents {
                fileCount += 1
                payloadBytes += entry.size ?? 0
            }
            if (entry.length ?? 0) > 0 { encodings.insert(entry.encoding ?? "application/octet-stream") }
            if (entry.size ?? 0) > 0 && (entry.extractedStyle?.lowercased() != "sha1" || entry.extractedChecksum == nil) { missingDigest = true }
        }), let top = first, !InstallerPackageLayout.startsInstallerPackage(ArchivePath(top)) else { return nil }
        if withFiles && missingDigest { return nil }
        var info: ParsedContentInfo?
        if let plist {
            guard let data = XarEntryData.read(plist, from: path, heapStart: toc.heapStart, limit: PackageLimits.maxContentInfoBytes) else { return nil }
            info = ParsedContentInfo(data: data)
        }
        var archiveBytes: Int64?
        if let attributes = try? FileManager.default.attributesOfItem(atPath: path) { archiveBytes = (attributes[.size] as? NSNumber)?.int64Value }
        let names = encodings.map { $0 == "application/x-gzip" ? "zlib" : $0 == "application/octet-stream" ? "stored" : $0 }.sorted()
        var report = InspectReport(path: path, format: .xar, productIdentifier: info?.productIdentifier, contentVersion: info?.contentVersion,
                                   compression: names.count > 1 ? "mixed (" + names.joined(separator: ", ") + ")" : names.first ?? "stored",
                                   checksum: toc.checksumStyle, fileCount: fileCount,
                                   payloadBytes: payloadBytes, archiveBytes: archiveBytes)
        if withFiles {
            report.files = toc.entries.map { entry in
                let kind = EntryKind(xarType: entry.type)
                let isFile = kind == .file
                return File(path: ArchivePath(entry.path).string, type: kind, size: isFile ? entry.size ?? 0 : 0,
                            storedSize: isFile ? entry.length ?? 0 : nil,
                            sha1: isFile ? (entry.extractedChecksum ?? emptySHA1) : nil)
            }
        }
        return report
    }
}
