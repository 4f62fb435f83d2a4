/// One package in `validate`'s report (SPEC section 5).
public struct PackageReport: Sendable, Codable {
    public var path: String
    public var valid: Bool
    public var format: PackageFormat?
    public var productIdentifier: String?
    public var contentVersion: String?
    public var fileCount: Int
    public var payloadBytes: Int64
    public var archiveBytes: Int64?
    public var diagnostics: [Diagnostic]

    /// The report for a checked package.
    public init(_ check: PackageCheck, strict: Bool) {
        let info = check.facts.parsedContentInfo
        path = check.path
        valid = check.isValid(strict: strict)
        format = check.facts.format
        productIdentifier = info?.productIdentifier
        contentVersion = info?.contentVersion
        fileCount = check.facts.fileCount
        payloadBytes = check.facts.payloadBytes
        archiveBytes = check.facts.archiveBytes
        diagnostics = check.diagnostics
    }

    enum CodingKeys: String, CodingKey {
        case path, valid, format, productIdentifier, contentVersion, fileCount, payloadBytes, archiveBytes, diagnostics
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(path, forKey: .path)
        try c.encode(valid, forKey: .valid)
        try c.encode(format, forKey: .format)
        try c.encode(productIdentifier, forKey: .productIdentifier)
        try c.encode(contentVersion, forKey: .contentVersion)
        try c.encode(fileCount, forKey: .fileCount)
        try c.encode(payloadBytes, forKey: .payloadBytes)
        try c.encode(archiveBytes, forKey: .archiveBytes)
        try c.encode(diagnostics, forKey: .diagnostics)
    }
}

/// `validate`'s whole report.
public struct ValidationReport: Sendable, Codable {
    public var valid: Bool
    public var packages: [PackageReport]

    public init(packages: [PackageReport]) {
        self.packages = packages
        valid = packages.allSatisfy(\.valid)
    }
}

/// `diff`'s verdict on an update.
public enum DiffVerdict: String, Sendable, Codable {
    case ok
    case versionNotBumped = "version-not-bumped"
    case contentUnchanged = "content-unchanged"
    case productIdentifierMismatch = "product-identifier-mismatch"
}

/// `diff`'s report (SPEC section 5).
public struct DiffReport: Sendable, Codable {
    /// Product id and version of one side.
    public struct Side: Sendable, Codable {
        public var productIdentifier: String?
        public var contentVersion: String?

        public func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(productIdentifier, forKey: .productIdentifier)
            try c.encode(contentVersion, forKey: .contentVersion)
        }
        enum CodingKeys: String, CodingKey { case productIdentifier, contentVersion }
    }

    public var old: Side
    public var new: Side
    public var added: [String]
    public var removed: [String]
    public var changed: [String]
    public var verdict: DiffVerdict

    /// Compares two checked packages by content (sha1 of every payload file, link targets).
    public init(old: PackageCheck, new: PackageCheck) {
        let oldInfo = old.facts.parsedContentInfo, newInfo = new.facts.parsedContentInfo
        self.old = Side(productIdentifier: oldInfo?.productIdentifier, contentVersion: oldInfo?.contentVersion)
        self.new = Side(productIdentifier: newInfo?.productIdentifier, contentVersion: newInfo?.contentVersion)
        let a = PayloadDigests.of(old.facts) ?? [:], b = PayloadDigests.of(new.facts) ?? [:]
        added = b.keys.filter { a[$0] == nil }.sorted()
        removed = a.keys.filter { b[$0] == nil }.sorted()
        changed = b.keys.filter { a[$0] != nil && a[$0] != b[$0] }.sorted()
        let oldVersion = oldInfo?.contentVersion.flatMap(ContentVersion.init)
        let newVersion = newInfo?.contentVersion.flatMap(ContentVersion.init)
        if oldInfo?.productIdentifier != newInfo?.productIdentifier {
            verdict = .productIdentifierMismatch
        } else if let oldVersion, let newVersion, newVersion > oldVersion {
            verdict = (added.isEmpty && removed.isEmpty && changed.isEmpty) ? .contentUnchanged : .ok
        } else {
            verdict = .versionNotBumped
        }
    }
}
