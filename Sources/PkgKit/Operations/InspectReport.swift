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

    /// Reads `path`: headers only, unless `withFiles` asks for every file's sha1.
    public static func make(_ path: String, limits: PackageLimits = PackageLimits(), withFiles: Bool) throws -> InspectReport {
        var opened = try PackageOpener.open(path, limits: limits)
        try PackageScanner(limits: limits, depth: withFiles ? .full : .headers).scan(opened.reader, into: &opened.facts)
        let facts = opened.facts
        let info = facts.parsedContentInfo
        var report = InspectReport(path: path, format: facts.format, productIdentifier: info?.productIdentifier,
                                   contentVersion: info?.contentVersion, compression: nil, checksum: nil,
                                   fileCount: facts.fileCount, payloadBytes: facts.payloadBytes, archiveBytes: facts.archiveBytes)
        let toc = facts.format == .xar ? XarTableOfContents.read(path) : nil
        switch facts.format {
        case .xar:
            let encodings = Set((toc?.files.values.map { $0.encoding ?? "application/octet-stream" }) ?? [])
            let names = encodings.map { $0 == "application/x-gzip" ? "zlib" : $0 == "application/octet-stream" ? "stored" : $0 }
            report.compression = names.count > 1 ? "mixed (" + names.sorted().joined(separator: ", ") + ")" : names.first ?? "stored"
            report.checksum = toc?.checksumStyle
        case .zip:
            report.compression = "zip"
            report.checksum = "crc32"
        case .flatPackage:
            report.compression = "gzip (cpio payload)"
            report.checksum = toc?.checksumStyle ?? "sha1"
        case .tar:
            report.compression = "tar"
            report.checksum = "none"
        case .folder, nil:
            report.compression = "none"
            report.checksum = "none"
        }
        if withFiles {
            report.files = facts.entries.map { entry in
                let stored = toc?.files[entry.path.string].map(\.length) ?? (entry.kind == .file && facts.format != .zip ? (toc == nil ? nil : 0) : nil)
                return File(path: entry.path.string, type: entry.kind, size: entry.size, storedSize: stored, sha1: entry.sha1)
            }
        }
        return report
    }
}
