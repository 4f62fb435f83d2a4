import ArgumentParser
import PkgKitDiagnostics
import PkgKit

/// The hints in PkgKit's diagnostics in the words of the command that prints them: each names
/// the flag that acts on it, and only when the command has that flag; otherwise PkgKit's plain
/// words (or nothing, for advice that is only an option), so that `validate` never advises
/// `--bump` and `sync` never `--force`.
enum HintWording {
    /// The wording for `command`.
    static func wording(for command: ParsableCommand.Type) -> DiagnosticWording {
        let name = command.commandLineName
        return DiagnosticWording { hint in
            // Looked up only when a hint is worded: reading the options costs each run time.
            let known = CommandOptions.of(name)
            let (flag, words) = flagged(hint)
            // Advice that another command acts on names that command in its words (flag nil).
            if flag.map({ known?.has($0) ?? false }) ?? true { return words }
            switch hint {
            case .force, .allowDowngrade: return ""
            default: return nil
            }
        }
    }

    /// The flag a hint is about (nil when the words name their own command) and the hint in
    /// words that use it.
    private static func flagged(_ hint: DiagnosticHint) -> (flag: String?, words: String) {
        switch hint {
        case .raiseSizeLimit: ("--max-size", "raise --max-size")
        case .bumpVersion: ("--bump", "raise it (e.g. --bump minor)")
        case .expectedProductIdentifier(let identifier): ("--product-id", "--product-id \(identifier)")
        case .expectedContentVersion(let version): ("--content-version", "--content-version \(version)")
        case .force: ("--force", ", or pass --force to replace it")
        case .allowDowngrade: ("--allow-downgrade", " or pass --allow-downgrade")
        case .signCatalog: (nil, "publish with --sign KEY.pem")
        case .rotateKeys: ("--sign", "(--sign OLD.pem --sign NEW.pem rotates keys)")
        case .idleTimeout: ("--timeout", "--timeout sets how long")
        case .outputFolder: ("--out", "give --out a folder")
        case .plistFile(let path): ("--plist", "--plist \(path ?? "FILE")")
        case .givenPlist: ("--plist", "the --plist file")
        case .productIdentifierSetting: ("--product-id", "--product-id")
        case .contentVersionSetting: ("--content-version", "--content-version")
        case .previousSetting: ("--previous", "--previous")
        case .givenPrevious: ("--previous", "the --previous package")
        case .bump(let part): ("--bump", "--bump" + (part.map { " " + $0 } ?? ""))
        case .format(let format): ("--format", "--format \(format)")
        case .outputPath: ("-o", "-o")
        }
    }
}

extension SyncPlan.FullDownloadReason {
    /// Why a package was downloaded whole, in sync's words: its flag for deltas turned off.
    var words: String {
        self == .noDelta ? "--no-delta" : rawValue
    }
}
