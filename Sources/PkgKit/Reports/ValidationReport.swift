import PkgKitDiagnostics
import PkgKitFormat
import PkgKitChecking

/// One package in `validate`'s report (docs/json.md).
public struct PackageReport: Sendable, Codable {
    public var path: String
    public var valid: Bool
    @Nullable public var format: PackageFormat?
    /// The one folder the package comes wrapped in (docs/format.md), nil when it has none.
    @Nullable public var wrapper: String?
    @Nullable public var productIdentifier: String?
    @Nullable public var contentVersion: String?
    public var fileCount: Int
    public var payloadBytes: Int64
    @Nullable public var archiveBytes: Int64?
    public var diagnostics: [Diagnostic]

    /// The report for a checked package.
    public init(_ check: PackageCheck, strict: Bool) {
        let info = check.facts.parsedContentInfo
        path = check.path
        valid = check.isValid(strict: strict)
        format = check.facts.format
        wrapper = check.facts.wrapper
        productIdentifier = info?.productIdentifier
        contentVersion = info?.contentVersion
        fileCount = check.facts.fileCount
        payloadBytes = check.facts.payloadBytes
        archiveBytes = check.facts.archiveBytes
        diagnostics = check.diagnostics
    }

    /// The report for a path that could not be checked at all: missing, unreadable
    /// (`unreadable-input`), or not checked because the command failed first (no diagnostics).
    public init(unchecked path: String, diagnostics: [Diagnostic]) {
        self.path = path
        valid = false
        format = nil
        wrapper = nil
        productIdentifier = nil
        contentVersion = nil
        fileCount = 0
        payloadBytes = 0
        archiveBytes = nil
        self.diagnostics = diagnostics
    }
}

/// `validate`'s whole report.
public struct ValidationReport: Sendable, Codable, OutcomeReporting {
    public var valid: Bool
    public var packages: [PackageReport]
    /// Findings about the run rather than one package (a `--previous` that cannot be read).
    public var diagnostics: [Diagnostic]

    public init(packages: [PackageReport], diagnostics: [Diagnostic] = []) {
        self.packages = packages
        self.diagnostics = diagnostics
        valid = !packages.isEmpty && packages.allSatisfy(\.valid) && !diagnostics.failing()
    }

    /// A path that could not be read at all outweighs an invalid package.
    public var outcome: Outcome { Outcome(passed: valid, diagnostics + packages.flatMap(\.diagnostics)) }
}
