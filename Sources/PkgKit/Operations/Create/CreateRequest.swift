import PkgKitSupport
import PkgKitDiagnostics
import PkgKitIdentity
import PkgKitFormat

/// Everything `pkgtool create` was asked to do.
public struct CreateRequest: Sendable {
    /// The source: a folder, or a package file (any container the readers accept) to rebuild.
    public var source: String
    /// The output path; default `./<IAPProductIdentifier>-<ContentVersion>.pkg`. An existing folder
    /// (or a path ending in `/`) receives the default name inside it.
    public var output: String?
    /// A ContentInfo.plist from elsewhere.
    public var plist: String?
    /// `--product-id`.
    public var productIdentifier: String?
    /// `--content-version`.
    public var contentVersion: String?
    /// `--previous`: the package or folder this one updates.
    public var previous: String?
    /// `--bump`.
    public var bump: ContentVersion.Part?
    /// Container, compression, level, jobs, timestamp.
    public var options: WriteOptions
    /// `--max-size`.
    public var limits: PackageLimits
    /// Checked between create's steps and last before the package is put in place: once set, the
    /// run stops with `OperationCancelled` and writes nothing.
    public var cancellation: Cancellation?

    /// A request; everything but the source is optional.
    public init(source: String, output: String? = nil, plist: String? = nil, productIdentifier: String? = nil,
                contentVersion: String? = nil, previous: String? = nil, bump: ContentVersion.Part? = nil,
                options: WriteOptions = WriteOptions(), limits: PackageLimits = PackageLimits(),
                cancellation: Cancellation? = nil) {
        self.source = source
        self.output = output
        self.plist = plist
        self.productIdentifier = productIdentifier
        self.contentVersion = contentVersion
        self.previous = previous
        self.bump = bump
        self.options = options
        self.limits = limits
        self.cancellation = cancellation
    }
}

/// Why `create` could not run at all, as opposed to refusing an invalid source (a result whose
/// `output` is nil). Each case is a typed fact about the request; a front end decides which of
/// them are its own usage errors.
public enum CreateFailure: DiagnosableError, Sendable, Equatable {
    /// An input (the source, `--plist`, `--previous`) is missing or cannot be read.
    case unreadableInput(path: String?, DiagnosticMessage)
    /// The output would be the source package itself: it would be replaced by its own rebuild.
    case outputIsSource(path: String)
    /// `--bump` has no version to start from: no `--previous` and no ContentVersion in the plist.
    case nothingToBump(ContentVersion.Part)
    /// `--bump` computes the version, so `--content-version` may not be given with it.
    case bumpWithContentVersion
    /// The output would be the `--previous` package itself (under any spelling or link).
    case outputIsPrevious(path: String)
    /// The package cannot be written in the form asked (`--format zip` without PkgKitArchive).
    case cannotWrite(path: String?, DiagnosticMessage)

    public var diagnostic: Diagnostic {
        switch self {
        case .unreadableInput(let path, let message):
            return Diagnostic(.unreadableInput, path: path, words: message)
        case .outputIsSource(let path):
            return Diagnostic(.ioError, path: path,
                              "is the source package: writing its rebuild over it is refused and nothing was written; write the package elsewhere")
        case .nothingToBump(let part):
            return Diagnostic(.missingKey, path: ContentInfo.fileName,
                              words: "\(hint: .bump(part: part.rawValue)) needs a version to start from: give \(hint: .previousSetting), or a ContentInfo.plist with a valid ContentVersion")
        case .bumpWithContentVersion:
            return Diagnostic(.contentVersionMismatch, path: nil, words: "\(hint: .bump(part: nil)) computes the version; do not also give \(hint: .contentVersionSetting)")
        case .outputIsPrevious(let path):
            return Diagnostic(.ioError, path: path,
                              words: "is \(hint: .givenPrevious): writing over it is refused and nothing was written; choose another \(hint: .outputPath) (the default is ./<id>-<version>.pkg)")
        case .cannotWrite(let path, let message):
            return Diagnostic(.ioError, path: path, words: message)
        }
    }

    /// Refused when the request contradicts itself; a failure when an input or the output cannot
    /// be used.
    public var disposition: ErrorDisposition {
        switch self {
        case .nothingToBump, .bumpWithContentVersion: return .refused
        case .unreadableInput, .outputIsSource, .outputIsPrevious, .cannotWrite: return .failed
        }
    }
}
