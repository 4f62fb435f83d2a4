import Foundation
import PkgKitCatalog

/// Which signature files a published folder keeps: the newest `kept`, "newest" meaning the
/// order in which publish wrote them, as recorded in `signatures/order.txt`.
///
/// The order is recorded rather than read from modification times because a published folder
/// often makes a round trip through an object store (`aws s3 sync` up, a fresh CI machine
/// syncing it down again): the times then say when the files were uploaded or downloaded, all
/// nearly the same, while the record travels with the folder as data. The signature of the
/// published catalog is always kept, whatever the record says.
struct SignatureHistory: Sendable, Equatable {
    /// The record's name inside `signatures/`. Clients never fetch it.
    package static let fileName = "order.txt"
    /// How many signature files publish keeps (docs/publishing.md).
    package static let kept = 32

    /// Signature file digests (names without `.sig`), oldest first.
    package var digests: [String]

    /// The record's digests, oldest first: one per line; lines that are not a digest are skipped.
    package init(recorded: Data?) {
        let lines = String(decoding: recorded ?? Data(), as: UTF8.self).split(whereSeparator: \.isNewline)
        digests = lines.map { $0.trimmingCharacters(in: .whitespaces) }.filter { CatalogSignature.isSignatureFileName($0 + ".sig") }
    }

    package init(digests: [String]) {
        self.digests = digests
    }

    /// The record's bytes: a digest per line, oldest first.
    package var contents: Data { Data(digests.map { $0 + "\n" }.joined().utf8) }

    /// The history after a publish, and the signature files to delete once the new catalog is in
    /// place. `present` are the files in `signatures/` (digest and modification time, in seconds),
    /// `written` the digests this run wrote, oldest first, and `current` the digest of the catalog
    /// it leaves published.
    ///
    /// Files the record does not list (copied in by hand, or left by a run stopped before it
    /// recorded or deleted them) count as older than every recorded one, in order of
    /// modification time and then name; the files this run wrote are the newest, and the
    /// published catalog's is the newest of all.
    func updated(present: [(digest: String, modified: Double)], written: [String],
                 current: String) -> (history: SignatureHistory, removed: [String]) {
        let onDisk = Set(present.map(\.digest)).union(written)
        let recent = Set(written + [current])
        var recorded: [String] = []
        for digest in digests.reversed() where onDisk.contains(digest) && !recent.contains(digest) && !recorded.contains(digest) {
            recorded.insert(digest, at: 0)
        }
        let listed = Set(recorded)
        let unrecorded = present.filter { !listed.contains($0.digest) && !recent.contains($0.digest) }
            .sorted { ($0.modified, $0.digest) < ($1.modified, $1.digest) }.map(\.digest)
        var order = unrecorded + recorded + written.filter { $0 != current }
        if onDisk.contains(current) { order.append(current) }
        let removed = Array(order.dropLast(Self.kept))
        return (SignatureHistory(digests: Array(order.suffix(Self.kept))), removed)
    }
}
