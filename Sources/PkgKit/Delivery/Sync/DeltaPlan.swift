import PkgKitSupport
import PkgKitFormat
import PkgKitInstall

/// What a delta update reuses and what it downloads: a pure value computed from the new package's
/// table of contents and the files of the installed version (zsync's idea, with the xar TOC as the
/// control file: it gives every file's heap range and sha1).
///
/// A file under `Contents/` whose `extracted-checksum` (sha1) equals the sha1 of an installed file
/// is reused, whatever its name; installed files are read and hashed to know that, never judged by
/// name or size. Chunks go by content too: a changed file with a chunk table is rebuilt from
/// chunks (`ChunkAssembly`), each taken from whichever installed file of the product holds it
/// (`ChunkIndex`: a renamed, split or merged bundle shares chunks with files of other names), and
/// only the chunks no installed file holds are fetched.
/// Everything else (changed files, ContentInfo.plist) is fetched as heap ranges, ranges less than
/// `mergeGap` apart merged into one request.
///
/// Every byte a delta takes from a fetched range is checked against a digest the anchored TOC
/// carries: a fetched file's sha1 checksum (archived or extracted, which the reader verifies), or
/// its chunks' digests. A package where a file to be fetched has none is downloaded whole and
/// checked against the catalog's sha256 instead (`WholeDownload.unverifiedFile`), as is one whose
/// ranges would take more than `maxRanges` requests.
package struct DeltaPlan: Sendable {
    /// Files taken from the installed version, by their path in the package.
    package var reused: [ArchivePath: InstalledFile] = [:]
    /// The same files by their place in the TOC's document order: their heap ranges are never read.
    package var reusedEntries: Set<Int> = []
    /// Ranges of the package to download (heap data), sorted and merged.
    package var fetch: [Range<Int64>] = []
    /// Files under `Contents/` whose data is fetched (ContentInfo.plist always is too), whole or
    /// in part.
    package var fetchedFiles = 0
    /// Files rebuilt from chunks; their entries are in `reusedEntries`, and they join `reused`
    /// once rebuilt.
    package var assembled: [ChunkAssembly] = []

    /// Bytes the ranges cover.
    package var fetchBytes: Int64 { fetch.reduce(0) { $0 + Int64($1.count) } }

    /// One regular file of the new package, as its TOC describes it.
    package struct WantedFile: Sendable {
        /// Its place in the TOC's document order.
        package var order: Int
        package var path: ArchivePath
        package var size: Int64
        /// Heap offset and stored length, when it has data.
        package var offset: Int64?
        package var length: Int64?
        /// The TOC's sha1 of its unpacked bytes, when the TOC gives one.
        package var sha1: SHA1Value?
        /// How it is cut into chunks, when the TOC says, and whether its data is a zlib stream.
        package var chunks: ChunkTable? = nil
        package var gzip = false
        /// True when the TOC carries a sha1 of its stored or unpacked bytes, which the reader checks
        /// them against: only then may its bytes come from a ranged fetch.
        package var digested = false

        /// The file as a TOC describes it.
        package init(order: Int, path: ArchivePath, size: Int64, offset: Int64?, length: Int64?, sha1: SHA1Value?,
                     chunks: ChunkTable? = nil, gzip: Bool = false, digested: Bool) {
            (self.order, self.path, self.size, self.offset, self.length, self.sha1) = (order, path, size, offset, length, sha1)
            (self.chunks, self.gzip, self.digested) = (chunks, gzip, digested)
        }
    }

    /// Why a package whose TOC was read is downloaded whole after all.
    package enum WholeDownload: Error, Equatable {
        /// A file's data lies outside the package.
        case unusableRange
        /// A file to be fetched has no checksum in the TOC: nothing would vouch for its bytes.
        case unverifiedFile(ArchivePath)
        /// The changed ranges, merged, would take this many requests (more than `maxRanges`).
        case tooManyRanges(Int)

        /// The reason a sync reports.
        package var reason: SyncPlan.FullDownloadReason {
            switch self {
            case .unusableRange: .noTableOfContents
            case .unverifiedFile: .unverifiedFile
            case .tooManyRanges: .tooManyRanges
            }
        }
    }

    /// Ranges closer than this are fetched as one: the bytes between cost less than a request.
    package static let mergeGap: Int64 = 32 << 10
    /// The most ranged requests a delta makes for file data; past it the package is downloaded whole.
    package static let maxRanges = 1024

    /// The plan for `wanted` (every regular file of the package), with the heap starting at
    /// `heapStart`, and the installed version read into `installed`, with the chunks of its
    /// files in `chunks` (cut as the new package's tables were). Throws
    /// `WholeDownload` when a delta would take bytes nothing verifies, or too many requests, or a
    /// file's range is not usable (the package is then downloaded whole, and judged whole).
    package static func make(wanted: [WantedFile], heapStart: Int64, packageSize: Int64,
                     installed: InstalledTree, chunks: ChunkIndex? = nil) throws(WholeDownload) -> DeltaPlan {
        // Sized once: grown as they fill, the tables of a 10,000-file plan were rehashed a dozen times.
        var bySHA1: [SHA1Value: InstalledFile] = [:]
        bySHA1.reserveCapacity(installed.files.count)
        for file in installed.files where bySHA1[file.sha1] == nil { bySHA1[file.sha1] = file }
        var plan = DeltaPlan()
        plan.reused.reserveCapacity(wanted.count)
        plan.reusedEntries.reserveCapacity(wanted.count)
        var ranges: [Range<Int64>] = []
        for file in wanted {
            if file.path.isInsideContents, file.size > 0, let sha1 = file.sha1, let match = bySHA1[sha1], match.identity.size == file.size {
                plan.reused[file.path] = match
                plan.reusedEntries.insert(file.order)
                continue
            }
            guard let length = file.length, length > 0 else { continue }
            guard let offset = file.offset, offset >= 0, case let (start, overflow) = heapStart.addingReportingOverflow(offset),
                  !overflow, start <= packageSize, length <= packageSize - start else { throw .unusableRange }
            if let table = file.chunks, let index = chunks, let sha1 = file.sha1, case let assembly = ChunkAssembly(
                order: file.order, path: file.path, size: file.size, sha1: sha1, table: table, gzip: file.gzip, fileStart: start, index: index),
               assembly.fetchedChunks < assembly.sources.count {
                ranges += assembly.fetchRanges
                plan.assembled.append(assembly)
                plan.reusedEntries.insert(file.order)
                plan.fetchedFiles += 1
                continue
            }
            guard file.digested else { throw .unverifiedFile(file.path) }
            ranges.append(start ..< start + length)
            if file.path.isInsideContents { plan.fetchedFiles += 1 }
        }
        plan.fetch = merge(ranges)
        guard plan.fetch.count <= maxRanges else { throw .tooManyRanges(plan.fetch.count) }
        return plan
    }

    /// Sorted, with ranges that overlap or lie less than `gap` bytes apart joined (with the bytes
    /// between them).
    package static func merge(_ ranges: [Range<Int64>], gap: Int64 = mergeGap) -> [Range<Int64>] {
        var merged: [Range<Int64>] = []
        for range in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if let last = merged.last, range.lowerBound <= last.upperBound || range.lowerBound - last.upperBound < gap {
                merged[merged.count - 1] = last.lowerBound ..< max(last.upperBound, range.upperBound)
            } else {
                merged.append(range)
            }
        }
        return merged
    }

    /// How to cut installed files for the chunk tables of `wanted`'s changed files (those whose
    /// sha1 no installed file has): the sizes most of them were cut with, and the smallest
    /// installed file worth cutting: the package's smallest chunked file, or any file `create`
    /// would chunk (`ChunkParameters.smallestChunkedFile`) when that is smaller, so that the
    /// pieces of a merged bundle, each smaller than the whole, are cut too; never one smaller than
    /// a chunk. Nil when no changed file has a table.
    static func chunking(_ wanted: [WantedFile], installed: InstalledTree) -> (parameters: ChunkParameters, minimumSize: Int64)? {
        let chunked = wanted.filter { $0.chunks != nil && $0.sha1 != nil && $0.path.isInsideContents }
        guard !chunked.isEmpty else { return nil }
        let known = Set(installed.files.lazy.map(\.sha1))
        var votes: [(parameters: ChunkParameters, count: Int)] = []
        for file in chunked where !known.contains(file.sha1!) {
            let parameters = file.chunks!.parameters
            if let at = votes.firstIndex(where: { $0.parameters == parameters }) { votes[at].count += 1 } else { votes.append((parameters, 1)) }
        }
        guard let parameters = votes.max(by: { $0.count < $1.count })?.parameters else { return nil }
        let smallest = min(chunked.lazy.map(\.size).min()!, ChunkParameters.smallestChunkedFile)
        return (parameters, max(smallest, Int64(parameters.minimumSize)))
    }

    /// The installed version's chunk index for `wanted`, brought up to date (from the one kept
    /// beside the version folder, files that changed cut again). Nil when no changed file has a
    /// chunk table. The files the scan left unhashed (`InstalledTree.unhashed`) are hashed first
    /// and join `installed`: one unknown only for want of a read (a file too recent for the stat
    /// cache) would otherwise count as changed, and every large installed file the index does not
    /// cover would be cut for nothing. A large one is then read twice when chunks are needed.
    static func chunkIndex(_ wanted: [WantedFile], installed: inout InstalledTree, folder: ProductFolder,
                           cancellation: Cancellation?) throws -> ChunkIndex? {
        try hashUnhashed(&installed, folder: folder, cancellation: cancellation)
        guard let chunking = chunking(wanted, installed: installed) else { return nil }
        let candidates = installed.files.filter { $0.size >= chunking.minimumSize }
            .map { ChunkIndex.Candidate(path: $0.relativePath, identity: $0.identity, needsSHA1: false) }
        let kept = ChunkIndex.read(folder, version: installed.version, parameters: chunking.parameters)
        return try (kept ?? ChunkIndex(version: installed.version, parameters: chunking.parameters))
            .refreshed(folder, candidates: candidates, minimumSize: chunking.minimumSize, cancellation: cancellation).index
    }

    /// Hashes the files the scan left unhashed, cutting none, and adds them to `installed`.
    private static func hashUnhashed(_ installed: inout InstalledTree, folder: ProductFolder, cancellation: Cancellation?) throws {
        guard !installed.unhashed.isEmpty else { return }
        let candidates = installed.unhashed.map { ChunkIndex.Candidate(path: $0.relativePath, identity: $0.identity, needsSHA1: true) }
        let (_, hashed) = try ChunkIndex(version: installed.version, parameters: .standard)
            .refreshed(folder, candidates: candidates, minimumSize: .max, cancellation: cancellation)
        installed.addHashed(hashed)
    }

    /// The sizes worth hashing among installed files: only a file of one of these sizes can match.
    package static func sizes(of wanted: [WantedFile]) -> Set<Int64> {
        Set(wanted.lazy.filter { $0.path.isInsideContents && $0.size > 0 && $0.sha1 != nil }.map(\.size))
    }

    /// Every regular file the TOC of the xar at `path` describes (only the header, the TOC and its
    /// checksum need to be there: a sparse copy will do), with the parsed TOC, and `memo` holding
    /// it for an install from the same file; nil when pkgtool's own reader does not read it.
    package static func wantedFiles(inTOCOf path: String, limits: PackageLimits = PackageLimits())
        -> (toc: XarTableOfContents, files: [WantedFile], memo: XarTableMemo)? {
        let memo = XarTableMemo()
        guard case .reader = try? XarReader.open(path: path, limits: limits, memo: memo), let parsed = memo.peek() else { return nil }
        return (parsed.toc, wantedFiles(in: parsed.table), memo)
    }

    /// Every regular file a parsed TOC describes, by its place in document order.
    package static func wantedFiles(in table: XarEntryTable) -> [WantedFile] {
        var files: [WantedFile] = []
        for index in table.records.indices where table.records[index].kind == .file {
            let record = table.records[index]
            // A path too long to hold is never reused (it is fetched, and the install judges it).
            let path = table.path(at: index, limit: 4 * PackageLimits.maxPathBytes) ?? []
            files.append(WantedFile(order: index, path: ArchivePath(raw: path), size: max(record.size, 0),
                                    offset: record.hasData ? record.offset : nil, length: record.hasData ? record.length : nil,
                                    sha1: record.extractedStyle == .sha1 ? SHA1Value(bytes: table.extractedDigest(record)) : nil,
                                    chunks: table.chunks(record), gzip: record.gzip,
                                    digested: record.archivedStyle == .sha1 || record.extractedStyle == .sha1))
        }
        return files
    }
}
