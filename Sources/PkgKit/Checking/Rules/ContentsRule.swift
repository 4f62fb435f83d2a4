import PkgKitDiagnostics
import PkgKitFormat

/// `missing-contents`: the payload lives in `Contents/`, which must hold at least one file.
public struct ContentsRule: Rule {
    public init() {}
    public func check(_ package: PackageFacts, _ context: RuleContext) -> [Diagnostic] {
        if package.entries.contains(where: \.isPayloadFile) { return [] }
        if package.stoppedEarly || package.stoppedAtSizeLimit || (!package.readFailures.isEmpty && package.entries.isEmpty) { return [] }
        let hasFolder = package.entries.contains { $0.path.string == "Contents" || $0.path.isInsideContents }
        let message = hasFolder
            ? "Contents/ holds no regular file: put the content files in it"
            : "no Contents/ folder: put the content files in Contents/ next to ContentInfo.plist"
        return [Diagnostic(.missingContents, path: "Contents", message)]
    }
}
