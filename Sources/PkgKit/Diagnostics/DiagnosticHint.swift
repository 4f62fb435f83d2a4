
/// Advice, or a reference to a setting, inside a diagnostic's message that a front end words
/// with its own options. PkgKit never names a command-line flag: an app showing a diagnostic
/// gets `plainWords`, and `pkgtool` words each hint with the flags of the command that prints
/// it, so that no command advises a flag it does not have.
public enum DiagnosticHint: Hashable, Sendable {
    /// Raise the size limit (`PackageLimits.maxSize`).
    case raiseSizeLimit
    /// Raise the ContentVersion; `example` is a version that would do.
    case bumpVersion(example: String)
    /// The product identifier the caller expects, as the message names it.
    case expectedProductIdentifier(String)
    /// The ContentVersion the caller expects, as the message names it.
    case expectedContentVersion(String)
    /// Replace an installed version of the same number whose files differ
    /// (`InstallOptions.force`): a clause that follows other advice.
    case force
    /// Install a version lower than the installed one (`InstallOptions.allowDowngrade`): a
    /// clause that follows other advice.
    case allowDowngrade
    /// Sign the catalog when publishing it.
    case signCatalog
    /// Sign with the old and the new key at once, to rotate keys.
    case rotateKeys
    /// The idle timeout of a transfer, which the caller sets.
    case idleTimeout
    /// Give a folder as the output.
    case outputFolder
    /// A ContentInfo.plist of the caller's own (`CreateRequest.plist`), at `path` when one is
    /// suggested.
    case plistFile(path: String?)
    /// The ContentInfo.plist the caller gave (`CreateRequest.plist`).
    case givenPlist
    /// The product identifier that fills in a ContentInfo.plist (`CreateRequest.productIdentifier`).
    case productIdentifierSetting
    /// The ContentVersion that fills in a ContentInfo.plist (`CreateRequest.contentVersion`).
    case contentVersionSetting
    /// Give the previous package an update is checked against (`CreateRequest.previous`).
    case previousSetting
    /// The previous package the caller gave, as the subject of a sentence.
    case givenPrevious
    /// Computing the version by bumping `part` of the previous one (`CreateRequest.bump`).
    case bump(part: String?)
    /// The container format the caller asked for (`WriteOptions.format`).
    case format(String)
    /// Another output path (`CreateRequest.output`).
    case outputPath

    /// The hint in words that name no command-line flag, for a program that has none.
    public var plainWords: String {
        switch self {
        case .raiseSizeLimit: "raise the size limit"
        case .bumpVersion(let example): "raise it (e.g. to \(example))"
        case .expectedProductIdentifier(let identifier): "the expected product identifier \(identifier)"
        case .expectedContentVersion(let version): "the expected ContentVersion \(version)"
        case .force: ", or install with force to replace it"
        case .allowDowngrade: " or allow the downgrade"
        case .signCatalog: "sign the catalog when publishing"
        case .rotateKeys: "(signing with the old and the new key rotates keys)"
        case .idleTimeout: "the idle timeout sets how long"
        case .outputFolder: "give a folder"
        case .plistFile(let path): path.map { "a ContentInfo.plist (\($0))" } ?? "a ContentInfo.plist of its own"
        case .givenPlist: "the ContentInfo.plist given"
        case .productIdentifierSetting: "a product identifier"
        case .contentVersionSetting: "a ContentVersion"
        case .previousSetting: "the previous package"
        case .givenPrevious: "the previous package"
        case .bump(let part): part.map { "bumping the \($0) part" } ?? "bumping"
        case .format(let format): "the \(format) format"
        case .outputPath: "output path"
        }
    }
}
