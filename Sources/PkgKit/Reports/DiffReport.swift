import PkgKitDiagnostics
import PkgKitIdentity
import PkgKitFormat
import PkgKitChecking

/// `diff`'s verdict on an update.
public enum DiffVerdict: String, Sendable, Codable {
    case ok
    case versionNotBumped = "version-not-bumped"
    case contentUnchanged = "content-unchanged"
    case productIdentifierMismatch = "product-identifier-mismatch"
    /// One side could not be read whole, or breaks a rule: nothing is compared.
    case invalid
}

/// `diff`'s report (docs/json.md).
public struct DiffReport: Sendable, Codable, OutcomeReporting {
    /// One side: its path, product id and version, and its errors when it is invalid.
    public struct Side: Sendable, Codable {
        public var path: String
        @Nullable public var productIdentifier: String?
        @Nullable public var contentVersion: String?
        /// Why this side is invalid (errors only); empty when it was read whole and is valid.
        public var diagnostics: [Diagnostic]

        /// The side for a checked package.
        public init(_ check: PackageCheck) {
            path = check.path
            productIdentifier = check.facts.parsedContentInfo?.productIdentifier
            contentVersion = check.facts.parsedContentInfo?.contentVersion
            diagnostics = check.diagnostics.filter { $0.severity == .error }
        }

        /// The side for a path that could not be read at all.
        public init(unreadable path: String, _ diagnostic: Diagnostic) {
            self.path = path
            productIdentifier = nil
            contentVersion = nil
            diagnostics = [diagnostic]
        }
    }

    public var old: Side
    public var new: Side
    public var added: [String]
    public var removed: [String]
    public var changed: [String]
    /// The bytes of the files added (their sizes in the new package).
    public var addedBytes: Int64
    /// The bytes of the files removed (their sizes in the old package).
    public var removedBytes: Int64
    /// The bytes of the files changed, as the new package has them: what an update brings anew.
    public var changedBytes: Int64
    /// What a device that has the old version installed downloads to get the new one, as a sync
    /// counts it: header and TOC plus the stored bytes of the changed files (or of their changed
    /// chunks) for a delta, else the whole package. nil when it is no update to download (a
    /// folder, another product, no newer version) or was not counted.
    @Nullable public var downloadBytes: Int64? = nil
    public var verdict: DiffVerdict

    /// A success only for `ok`; failed when a side could not be read at all.
    public var outcome: Outcome { Outcome(passed: verdict == .ok, old.diagnostics + new.diagnostics) }

    /// Compares two checked packages by content (sha1 of every payload file, link targets).
    /// Both must have been read whole and be valid: otherwise the verdict is `invalid` and
    /// nothing is listed, for a diff never reports on a package it could not read.
    public init(old: PackageCheck, new: PackageCheck) {
        let a = old.isValid() ? PayloadDigests.of(old.facts) : nil
        let b = new.isValid() ? PayloadDigests.of(new.facts) : nil
        let oldSide = Side(old), newSide = Side(new)
        guard let a, let b else {
            self.init(invalid: oldSide, newSide)
            return
        }
        let added = b.keys.filter { a[$0] == nil }.sorted()
        let removed = a.keys.filter { b[$0] == nil }.sorted()
        let changed = b.keys.filter { a[$0] != nil && a[$0] != b[$0] }.sorted()
        let oldVersion = oldSide.contentVersion.flatMap(ContentVersion.init)
        let newVersion = newSide.contentVersion.flatMap(ContentVersion.init)
        let verdict: DiffVerdict
        if oldSide.productIdentifier != newSide.productIdentifier {
            verdict = .productIdentifierMismatch
        } else if let oldVersion, let newVersion, newVersion > oldVersion {
            verdict = (added.isEmpty && removed.isEmpty && changed.isEmpty) ? .contentUnchanged : .ok
        } else {
            verdict = .versionNotBumped
        }
        let oldSizes = Self.fileSizes(old.facts), newSizes = Self.fileSizes(new.facts)
        self.init(old: oldSide, new: newSide, added: added, removed: removed, changed: changed,
                  addedBytes: Self.total(added, newSizes), removedBytes: Self.total(removed, oldSizes),
                  changedBytes: Self.total(changed, newSizes), verdict: verdict)
    }

    private init(old: Side, new: Side, added: [String], removed: [String], changed: [String],
                 addedBytes: Int64, removedBytes: Int64, changedBytes: Int64, verdict: DiffVerdict) {
        self.old = old
        self.new = new
        self.added = added
        self.removed = removed
        self.changed = changed
        self.addedBytes = addedBytes
        self.removedBytes = removedBytes
        self.changedBytes = changedBytes
        self.verdict = verdict
    }

    /// The `invalid` report: one side (at least) could not be read whole or is invalid.
    public init(invalid old: Side, _ new: Side) {
        self.init(old: old, new: new, added: [], removed: [], changed: [], addedBytes: 0, removedBytes: 0, changedBytes: 0,
                  verdict: .invalid)
    }

    /// Each payload file's size, by its path below Contents/ (as `PayloadDigests` names it).
    private static func fileSizes(_ facts: PackageFacts) -> [String: Int64] {
        var sizes: [String: Int64] = [:]
        for entry in facts.entries where entry.kind == .file {
            if let relative = entry.path.contentsRelative { sizes[relative] = entry.size }
        }
        return sizes
    }

    /// The sum of `sizes` of `paths` (links count 0).
    private static func total(_ paths: [String], _ sizes: [String: Int64]) -> Int64 {
        paths.reduce(Int64(0)) { $0 + (sizes[$1] ?? 0) }
    }
}
