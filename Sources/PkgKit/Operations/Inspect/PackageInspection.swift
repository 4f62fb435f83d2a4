import Foundation
import PkgKitDiagnostics
import PkgKitFormat
import PkgKitChecking
import PkgKitReports

extension InspectReport {
    /// Reads `path`. A xar content package is described from its table of contents alone, as
    /// `bsdtar -t` would list it (its data is not read, so nothing is verified: that is
    /// `validate`'s work); other packages are scanned, headers only unless `withFiles` asks for
    /// every file's sha1.
    /// Either way the container must be whole: a xar whose heap is shorter than its TOC declares,
    /// a zip without its central directory, or bytes that are no archive are `unreadable-archive`;
    /// and a whole container without a ContentInfo.plist is no package (`missing-content-info`).
    public static func make(_ path: String, limits: PackageLimits = PackageLimits(), withFiles: Bool) throws -> InspectReport {
        var (report, holdsContentInfo) = try described(path, limits: limits, withFiles: withFiles)
        // Bytes that hold no ContentInfo.plist are no package: said as validate says it.
        if report.isWhole && !holdsContentInfo {
            report.diagnostics += ContentInfoRule().check(PackageFacts(), RuleContext(purpose: .validate))
        }
        return report
    }

    /// The report on what `path` holds, and whether a ContentInfo.plist is at its root (whatever
    /// it holds): before asking whether it is a package at all.
    private static func described(_ path: String, limits: PackageLimits, withFiles: Bool) throws -> (InspectReport, Bool) {
        if let fromTOC = fromXarTableOfContents(path, withFiles: withFiles) { return fromTOC }
        var opened = try PackageOpener.open(path, limits: limits)
        try PackageScanner(limits: limits, depth: withFiles ? .full : .headers).scan(opened.reader, into: &opened.facts)
        PackageCheck.describeTruncation(&opened.facts, path: path)
        let facts = opened.facts
        let info = facts.parsedContentInfo
        var report = InspectReport(path: path, format: facts.format, productIdentifier: info?.productIdentifier,
                                   contentVersion: info?.contentVersion, compression: nil, checksum: nil,
                                   fileCount: facts.fileCount, payloadBytes: facts.payloadBytes, archiveBytes: facts.archiveBytes)
        report.wrapper = facts.wrapper
        report.diagnostics = facts.readFailures
        if facts.format == .xar || facts.format == .flatPackage, report.isWhole, let problem = ContainerExtent.xarProblem(path) {
            report.diagnostics.append(Diagnostic(.unreadableArchive, path: nil, problem))
        }
        switch facts.format {
        case .xar, .flatPackage:
            var encodings: Set<String> = []
            let toc = try? XarTableOfContents.read(path, keepEntries: false) { entry in
                if entry.type == "file" && (entry.length ?? 0) > 0 { encodings.insert(entry.encoding ?? "application/octet-stream") }
            }
            report.compression = facts.format == .flatPackage ? "gzip (cpio payload)" : compression(encodings)
            report.checksum = toc?.checksumStyle
        case .zip:
            report.compression = "zip"
            report.checksum = "crc32"
        case .tar:
            report.compression = "tar"
            report.checksum = "none"
        case .folder:
            report.compression = "none"
            report.checksum = "none"
        case nil:
            break
        }
        if withFiles {
            report.files = facts.entries.map { File(path: $0.path.string, type: $0.kind, size: $0.size, storedSize: nil, sha1: $0.sha1) }
        }
        return (report, facts.contentInfoData != nil || facts.contentInfoTooLarge)
    }

    /// A xar's compression in words, from the encodings of its stored data: `zlib`, `stored`,
    /// or `mixed (…)`.
    package static func compression(_ encodings: Set<String>) -> String {
        let names = encodings.map { $0 == "application/x-gzip" ? "zlib" : $0 == "application/octet-stream" ? "stored" : $0 }.sorted()
        return names.count > 1 ? "mixed (" + names.joined(separator: ", ") + ")" : names.first ?? "stored"
    }

    /// The sha1 of no bytes, which xar writers leave out of the TOC for empty files.
    static let emptySHA1 = "da39a3ee5e6b4b0d3255bfef95601890afd80709"

    /// The report from a xar content package's TOC, and whether it lists a ContentInfo.plist; nil
    /// when the TOC cannot answer (not a xar, an installer package, or `--files` without sha1
    /// checksums in the TOC).
    static func fromXarTableOfContents(_ path: String, withFiles: Bool) -> (InspectReport, Bool)? {
        // Without --files nothing per entry is kept: counts and sums are taken as the TOC streams by.
        var first: String?
        var plist: XarTableOfContents.Entry?
        var fileCount = 0
        var payloadBytes: Int64 = 0
        var encodings: Set<String> = []
        var missingDigest = false
        var heap = ContainerExtent.XarHeap()
        guard let toc = try? XarTableOfContents.read(path, keepEntries: withFiles, visit: { entry in
            heap.include(entry)
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
        }), let top = first.map({ ArchivePath($0).topLevel }),
              // An installer package, or a content package wrapped in a folder (or with a stray
              // first member), is read through the opener.
              top == ContentInfo.fileName || top == "Contents" else { return nil }
        if withFiles && missingDigest { return nil }
        var info: ParsedContentInfo?
        if let plist {
            guard let data = XarEntryData.read(plist, from: path, heapStart: toc.heapStart, limit: PackageLimits.maxContentInfoBytes) else { return nil }
            info = ParsedContentInfo(data: data)
        }
        var archiveBytes: Int64?
        if let attributes = try? FileManager.default.attributesOfItem(atPath: path) { archiveBytes = (attributes[.size] as? NSNumber)?.int64Value }
        let truncation = archiveBytes.flatMap { heap.problem(toc: toc, fileSize: $0) }
        var report = InspectReport(path: path, format: .xar, productIdentifier: info?.productIdentifier, contentVersion: info?.contentVersion,
                                   compression: compression(encodings),
                                   checksum: toc.checksumStyle, fileCount: fileCount,
                                   payloadBytes: payloadBytes, archiveBytes: archiveBytes)
        if let truncation { report.diagnostics.append(Diagnostic(.unreadableArchive, path: nil, truncation)) }
        if withFiles {
            report.files = toc.entries.map { entry in
                let kind = EntryKind(xarType: entry.type)
                let isFile = kind == .file
                return File(path: ArchivePath(entry.path).string, type: kind, size: isFile ? entry.size ?? 0 : 0,
                            storedSize: isFile ? entry.length ?? 0 : nil,
                            sha1: isFile ? (entry.extractedChecksum ?? emptySHA1) : nil)
            }
        }
        return (report, plist != nil)
    }
}
