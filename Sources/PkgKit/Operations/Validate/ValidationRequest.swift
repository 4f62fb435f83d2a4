import PkgKitSupport
import PkgKitIdentity
import PkgKitFormat

/// What `validate` checks: the packages, and what they must be (the command's flags).
public struct ValidationRequest: Sendable {
    /// The packages or unpacked folders, in the order they are reported.
    public var paths: [String]
    /// The IAPProductIdentifier every package must have, when one is required.
    public var productIdentifier: String?
    /// The package (or folder) these update: same product, greater version, changed contents.
    public var previous: String?
    /// The version these update, when no previous package is given.
    public var previousVersion: ContentVersion?
    /// Warnings count as errors.
    public var strict: Bool
    /// The size limits.
    public var limits: PackageLimits
    /// Stops the run between reads when set.
    public var cancellation: Cancellation?

    /// A request to validate `paths`.
    public init(paths: [String], productIdentifier: String? = nil, previous: String? = nil, previousVersion: ContentVersion? = nil,
                strict: Bool = false, limits: PackageLimits = PackageLimits(), cancellation: Cancellation? = nil) {
        self.paths = paths
        self.productIdentifier = productIdentifier
        self.previous = previous
        self.previousVersion = previousVersion
        self.strict = strict
        self.limits = limits
        self.cancellation = cancellation
    }
}
