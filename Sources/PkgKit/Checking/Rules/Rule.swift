import PkgKitDiagnostics
import PkgKitIdentity
import PkgKitFormat

/// One check of docs/diagnostics.md over the facts of a package.
public protocol Rule: Sendable {
    /// The findings for `package`; empty when the rule is satisfied.
    func check(_ package: PackageFacts, _ context: RuleContext) -> [Diagnostic]
}

/// What a rule needs to know beyond the package itself.
public struct RuleContext: Sendable {
    /// Which command is asking: a few rules differ between building and checking.
    public enum Purpose: Sendable { case create, validate, extract }

    /// Where the expected identifier and version come from, for the wording of a mismatch.
    public enum ExpectationSource: Sendable {
        /// `--product-id` and `--content-version`.
        case flags
        /// A sync's catalog entry.
        case catalog
    }

    /// Which command is asking.
    public var purpose: Purpose
    /// The bounds in force.
    public var limits: PackageLimits
    /// `--product-id`, when given.
    public var expectedProductIdentifier: String?
    /// `--content-version` (create), when given.
    public var expectedContentVersion: String?
    /// The package this one updates, when given.
    public var previous: PreviousPackage?
    /// Where `expectedProductIdentifier` and `expectedContentVersion` come from.
    public var expectationsFrom: ExpectationSource = .flags

    /// A context for `purpose`; everything else is optional.
    public init(purpose: Purpose, limits: PackageLimits = PackageLimits(), expectedProductIdentifier: String? = nil,
                expectedContentVersion: String? = nil, previous: PreviousPackage? = nil) {
        self.purpose = purpose
        self.limits = limits
        self.expectedProductIdentifier = expectedProductIdentifier
        self.expectedContentVersion = expectedContentVersion
        self.previous = previous
    }
}

/// What is known of the version a package replaces: from `--previous` (a whole package) or
/// `--previous-version` (just a number).
public struct PreviousPackage: Sendable {
    /// Its product identifier, when a package was given.
    public var productIdentifier: String?
    /// Its version.
    public var contentVersion: ContentVersion
    /// sha1 of each payload file by path, when a package was given.
    public var payloadDigests: [String: String]?

    public init(productIdentifier: String?, contentVersion: ContentVersion, payloadDigests: [String: String]? = nil) {
        self.productIdentifier = productIdentifier
        self.contentVersion = contentVersion
        self.payloadDigests = payloadDigests
    }
}

/// The rules every command shares, in the order their findings are reported.
public enum Rules {
    /// Every rule of docs/diagnostics.md that judges package content.
    public static let all: [any Rule] = [
        BadExtensionRule(),
        SizeLimitRule(),
        ContentInfoRule(),
        ContentVersionRule(),
        ProductIdentifierRule(),
        VersionBumpRule(),
        ContentsRule(),
        OutsideContentsRule(),
        UnsafePathRule(),
        DuplicateEntryRule(),
        SpecialFileRule(),
        ExecutableCodeRule(),
        ExecutablePermissionRule(),
        SymlinkEscapeRule(),
        HardlinkEscapeRule(),
        DanglingSymlinkRule(),
        CaseCollisionRule(),
        CodeBundleRule(),
        JunkFileRule(),
        ContentUnchangedRule(),
        UnknownKeyRule(),
    ]

    /// Runs every rule, read failures first.
    public static func check(_ package: PackageFacts, _ context: RuleContext) -> [Diagnostic] {
        package.readFailures + all.flatMap { $0.check(package, context) }
    }
}
