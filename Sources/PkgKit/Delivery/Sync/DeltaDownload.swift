import Foundation
import PkgKitSupport
import PkgKitFormat
import PkgKitCatalog
import PkgKitTransport

/// The download half of a delta update, in two steps: `fetchTableOfContents` gets a package's
/// header and table of contents with a Range request and checks them against the catalog's
/// `tocSHA256`; `fetchRanges` then gets only the heap ranges a `DeltaPlan` names, one request per
/// merged range, into the same `SparseCopy`. Between the two, the caller plans against the
/// installed version (`sync`), or only counts what would be fetched (`sync --check`). The install
/// half is the installer's, reading the copy as `PackageSource.delta`.
struct DeltaDownload: Sendable {
    /// The package's URL and its catalog entry.
    package var url: URL
    package var entry: CatalogVersion
    package var transport: any HTTPTransport
    package var retryPolicy: RetryPolicy
    package var transferPolicy: TransferPolicy
    /// The attempts of every request of this delta, together with those of the other deltas of
    /// the same sync (`ServerKnowledge.retryBudget`): one allowance, however many ranges it fetches.
    var retryBudget = RetryBudget()

    /// The download of the package at `url`, with its catalog entry.
    package init(url: URL, entry: CatalogVersion, transport: any HTTPTransport, retryPolicy: RetryPolicy, transferPolicy: TransferPolicy) {
        (self.url, self.entry, self.transport, self.retryPolicy, self.transferPolicy) = (url, entry, transport, retryPolicy, transferPolicy)
    }

    /// How much of the header and TOC the first request asks for: most TOCs fit.
    static let firstRequestBytes: Int64 = 64 << 10

    /// What the first step found.
    enum TableOfContents: Sendable {
        /// The header and TOC are in the copy, checked; bytes `0 ..< fetched` are there. `memo`
        /// holds the parsed TOC, for the install from the copy not to parse it again.
        case ready(XarTableOfContents, files: [DeltaPlan.WantedFile], fetched: Int64, memo: XarTableMemo)
        /// The server answered the Range request with the whole file (200). With `acceptWhole`
        /// it is now in the copy, checked against the catalog's size and sha256; without, the
        /// transfer was dropped at once.
        case whole(downloaded: Bool)
        /// A delta does not apply (not a xar pkgtool reads itself).
        case notApplicable(String)
    }

    /// The server sent the whole file for a Range request where it was not wanted.
    struct RangesIgnored: Error {}

    /// Step one: the header and TOC into `copy`. `received` counts every byte that arrives.
    func fetchTableOfContents(into copy: SparseCopy, acceptWhole: Bool, received: ByteCounter, limits: PackageLimits,
                              progress: (@Sendable (Int64, Int64) -> Void)?) async throws -> TableOfContents {
        guard let tocSHA256 = entry.tocSHA256 else { return .notApplicable("the catalog gives no tocSHA256") }
        // The header and (most likely) the whole TOC and its checksum in one request. A server
        // that ignores Range sends the whole package instead: with `acceptWhole` that is then the
        // one download.
        var fetched = min(entry.size, Self.firstRequestBytes)
        do {
            if try await fetch(0 ..< fetched, into: copy, received: received, acceptWhole: acceptWhole,
                               advanced: { progress?(received.value, entry.size) }) {
                let digest = try copy.sha256(ofFirst: entry.size)
                guard digest == entry.sha256.lowercased() else {
                    throw DownloadError.checksumMismatch(url: url.absoluteString, expected: entry.sha256, actual: digest)
                }
                return .whole(downloaded: true)
            }
        } catch is RangesIgnored {
            return .whole(downloaded: false)
        }
        guard let header = XarHeader(try copy.read(XarHeader.size, at: 0)) else {
            return .notApplicable("not a xar package pkgtool reads itself")
        }
        let tocEnd = header.anchoredBytes.upperBound
        guard header.tocLength > 0, tocEnd < entry.size else { return .notApplicable("the header's TOC length does not fit the package") }
        // The TOC's own checksum follows it in every xar writer's output (heap offset 0).
        let wanted = min(entry.size, tocEnd + 64)
        if wanted > fetched {
            try await fetch(fetched ..< wanted, into: copy, received: received)
            fetched = wanted
        }
        let digest = try copy.sha256(ofFirst: tocEnd)
        guard digest == tocSHA256.lowercased() else {
            throw DownloadError.tableOfContentsMismatch(url: url.absoluteString, expected: tocSHA256, actual: digest)
        }
        guard let (toc, files, memo) = DeltaPlan.wantedFiles(inTOCOf: copy.path, limits: limits) else {
            return .notApplicable("its table of contents is not one pkgtool reads itself")
        }
        return .ready(toc, files: files, fetched: fetched, memo: memo)
    }

    /// The ranges step two fetches for `plan`: its files' data and the TOC's checksum, without
    /// what the first step already brought (`0 ..< fetched`).
    package func ranges(for plan: DeltaPlan, toc: XarTableOfContents, fetched: Int64) -> [Range<Int64>] {
        var ranges: [Range<Int64>] = []
        if let offset = toc.checksumOffset, let size = toc.checksumSize, offset >= 0, size > 0, size <= 64,
           case let (start, overflow) = toc.heapStart.addingReportingOverflow(offset), !overflow,
           start + size <= entry.size, start + size > fetched {
            ranges.append(start ..< start + size)
        }
        return DeltaPlan.merge(ranges + plan.fetch.compactMap { range in
            range.upperBound <= fetched ? nil : max(range.lowerBound, fetched) ..< range.upperBound
        })
    }

    /// Step two: `ranges` into `copy`. Throws `RangesIgnored` when the server stops answering
    /// Range requests part-way.
    package func fetchRanges(_ ranges: [Range<Int64>], into copy: SparseCopy, received: ByteCounter,
                     progress: (@Sendable (Int64, Int64) -> Void)?) async throws {
        let planned = ranges.reduce(Int64(0)) { $0 + Int64($1.count) }
        let base = received.value
        for range in ranges {
            try await fetch(range, into: copy, received: received) { progress?(received.value - base, planned) }
        }
    }

    /// Fetches `range` into the copy, resuming within the range after a transient failure.
    /// With `acceptWhole`, a 200 (the server ignores Range) is taken as the whole package, written
    /// from byte 0 and bounded by the catalog's size; returns true when that happened. Without,
    /// a 200 throws `RangesIgnored` before any of its body is read.
    @discardableResult
    private func fetch(_ range: Range<Int64>, into copy: SparseCopy, received: ByteCounter, acceptWhole: Bool = false,
                       advanced: (@Sendable () -> Void)? = nil) async throws -> Bool {
        let position = ByteCounter(range.lowerBound)
        let whole = ByteCounter(0)
        let link = url.absoluteString, total = entry.size
        try await retryPolicy.run(clock: transferPolicy.clock, budget: retryBudget) { _, madeProgress in
            let start = position.value
            let end = whole.value == 1 ? total : range.upperBound
            guard start < end else { return }
            defer { madeProgress = position.value > start }
            let request = HTTPRequest(url: url, range: ByteRange(start ..< range.upperBound),
                                      maximumBodyBytes: acceptWhole ? total : range.upperBound - start)
            _ = try await transport.get(request, policy: transferPolicy, onResponse: { head in
                if head.statusCode == 200 {
                    guard acceptWhole else { throw RangesIgnored() }
                    guard head.contentLength == nil || head.contentLength == total else {
                        throw DownloadError.sizeMismatch(url: link, "the server's file is \(head.contentLength!) bytes, the catalog says \(total)")
                    }
                    // From byte 0 again, whatever an earlier attempt had.
                    position.add(-position.value)
                    whole.add(1 - whole.value)
                    return
                }
                guard let sent = head.contentRange, sent.first == start, sent.last == range.upperBound - 1, sent.total == nil || sent.total == total,
                      head.contentLength == nil || head.contentLength == range.upperBound - start else {
                    throw DownloadError.sizeMismatch(url: link, "asked for bytes \(start)-\(range.upperBound - 1) of \(total), the server sent something else")
                }
            }, onBody: { chunk in
                guard position.value + Int64(chunk.count) <= (whole.value == 1 ? total : range.upperBound) else {
                    throw DownloadError.bodyTooLong(url: link, limit: whole.value == 1 ? total : range.upperBound - start)
                }
                try copy.write(chunk, at: position.value)
                position.add(Int64(chunk.count))
                received.add(Int64(chunk.count))
                advanced?()
            })
            let wanted = whole.value == 1 ? total : range.upperBound
            if position.value < wanted {
                throw TransportError.connectionLost(url: link, "the body ended at byte \(position.value), before \(wanted)")
            }
        }
        return whole.value == 1
    }
}
