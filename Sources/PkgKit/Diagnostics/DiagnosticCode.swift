
/// Every diagnostic code of docs/diagnostics.md. The raw value is what scripts see.
public enum DiagnosticCode: String, Codable, Sendable, CaseIterable {
    case badExtension = "bad-extension"
    case unreadableArchive = "unreadable-archive"
    case checksumMismatch = "checksum-mismatch"
    case missingContentInfo = "missing-content-info"
    case invalidContentInfo = "invalid-content-info"
    case missingKey = "missing-key"
    case invalidContentVersion = "invalid-content-version"
    case invalidProductIdentifier = "invalid-product-identifier"
    case productIdentifierMismatch = "product-identifier-mismatch"
    case contentVersionMismatch = "content-version-mismatch"
    case missingContents = "missing-contents"
    case outsideContents = "outside-contents"
    case unsafePath = "unsafe-path"
    case duplicateEntry = "duplicate-entry"
    case sizeLimit = "size-limit"
    case executableCode = "executable-code"
    case executablePermission = "executable-permission"
    case symlinkEscape = "symlink-escape"
    case hardlinkEscape = "hardlink-escape"
    case specialFile = "special-file"
    case versionNotBumped = "version-not-bumped"
    case danglingSymlink = "dangling-symlink"
    case caseCollision = "case-collision"
    case codeBundle = "code-bundle"
    case junkFile = "junk-file"
    case contentUnchanged = "content-unchanged"
    case unknownKey = "unknown-key"
    /// The path or URL does not exist or cannot be read (exit 2).
    case unreadableInput = "unreadable-input"
    /// `sync --product ID` names a product the catalog does not list.
    case unknownProduct = "unknown-product"
    /// A catalog's signature is missing or does not verify with the trusted key.
    case badSignature = "bad-signature"
    /// A catalog that is not valid JSON of the catalog's shape.
    case invalidCatalog = "invalid-catalog"
    /// `sync`: the installed version is newer than the catalog's latest (a warning: sync never
    /// downgrades, and leaves it as it is).
    case installedNewer = "installed-newer"
    /// `publish`: a package file has no checksum in its table of contents (a warning: clients
    /// then fetch that version whole, as only its catalog sha256 vouches for those bytes).
    case missingChecksum = "missing-checksum"

    /// Writing failed: the output or the Documents folder cannot be written, the disk is full (exit 2).
    case ioError = "io-error"
    /// The file system an output goes to has no room for what would be written (exit 2): found
    /// before anything is written.
    case insufficientSpace = "insufficient-space"
    /// `convert`: two products would share one asset pack ID (section 8).
    case assetPackIDCollision = "asset-pack-id-collision"

    /// The codes no package rule produces: they judge inputs, outputs, catalogs, signatures and several packages at once.
    public static let notFromRules: Set<DiagnosticCode> = [.unreadableInput, .ioError, .unknownProduct, .badSignature, .invalidCatalog, .installedNewer,
                                                                 .assetPackIDCollision, .missingChecksum, .insufficientSpace]

    /// Whether an error with this code is a refusal (the input was judged: exit 1) or a failure
    /// (the work could not be done: an input that cannot be read, a destination that cannot be
    /// written or has no room; exit 2).
    public var disposition: ErrorDisposition {
        self == .unreadableInput || self == .ioError || self == .insufficientSpace ? .failed : .refused
    }

    /// The severity docs/diagnostics.md gives this code.
    public var defaultSeverity: Severity {
        switch self {
        case .danglingSymlink, .caseCollision, .codeBundle, .junkFile, .contentUnchanged, .unknownKey, .installedNewer, .missingChecksum:
            return .warning
        default:
            return .error
        }
    }
}
