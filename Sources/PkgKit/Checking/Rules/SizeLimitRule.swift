import PkgKitDiagnostics
import PkgKitFormat

/// `size-limit`: the archive file and the unpacked payload must each stay within the limit.
public struct SizeLimitRule: Rule {
    public init() {}
    public func check(_ package: PackageFacts, _ context: RuleContext) -> [Diagnostic] {
        let limit = context.limits.maxSize
        var findings: [Diagnostic] = []
        if let bytes = package.archiveBytes, bytes > limit {
            findings.append(Diagnostic(.sizeLimit, path: nil, "the package file is \(bytes) bytes, over the limit of \(limit): split the content into several products"))
        }
        // payloadBytes: the regular files under Contents/ (ContentInfo.plist is not payload).
        let payload = package.entries.lazy.filter { $0.kind == .file && $0.path.isInsideContents }.reduce(Int64(0)) { $0 + $1.size }
        if package.stoppedAtSizeLimit || payload > limit {
            findings.append(Diagnostic(.sizeLimit, path: package.stoppedAtSizeLimit ? package.entries.last?.path.description : nil,
                                       words: "the unpacked content passes the limit of \(limit) bytes (reading stopped there): split the content or \(hint: .raiseSizeLimit)"))
        }
        return findings
    }
}
