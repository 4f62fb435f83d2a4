import Foundation
import PkgKitSupport

/// A xar table of contents kept from one pass over a package for the next pass over the same
/// file. An install reads a package twice (a first look that judges names and sizes, then the
/// full pass that verifies and writes), and parsing the same TOC again would be a noticeable part
/// of installing a package of many small files.
///
/// Nothing is trusted across passes: the next pass reads the compressed TOC again and hashes it
/// (the work of checking the TOC's own checksum, done anyway), and takes the table only when that
/// digest and the header are the ones the table was parsed from; otherwise it parses afresh.
/// Only small tables are kept (`maxKeptBytes`), so that keeping one never raises an install's
/// peak memory by more than that. A table taken and found to fit is kept again, for the pass after
/// (a caller may parse the TOC to plan what to fetch, then install with two passes over the same copy).
package final class XarTableMemo: Sendable {
    /// What a pass parsed, and what identifies the TOC it parsed.
    package struct Kept: Sendable {
        package var toc: XarTableOfContents
        package var table: XarEntryTable
        /// The compressed TOC's digest in the header's checksum style.
        package var digest: [UInt8]
    }

    /// The largest table kept (records and names): a 10,000-file package's is about 1.2 MB.
    package static let maxKeptBytes = 4 << 20

    /// The table kept, and how many passes took one.
    private let state = LockedValue((kept: Kept?.none, taken: 0))

    /// An empty memo.
    package init() {}

    /// How many passes have taken a table from here.
    package var timesTaken: Int { state.withLock { $0.taken } }

    /// Keeps what a pass parsed, when small enough, for the next pass.
    package func keep(_ value: Kept) {
        guard value.table.byteCount <= Self.maxKeptBytes else { return }
        state.withLock { $0.kept = value }
    }

    /// What the previous pass kept, if any, left kept.
    package func peek() -> Kept? {
        state.withLock { $0.kept }
    }

    /// What the previous pass kept, if any; it is no longer kept.
    package func take() -> Kept? {
        state.withLock { state in
            defer { state.kept = nil }
            if state.kept != nil { state.taken += 1 }
            return state.kept
        }
    }
}
