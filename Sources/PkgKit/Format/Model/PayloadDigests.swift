
/// The payload as a map from path below `Contents/` to sha1: what "same content" means for
/// `diff`, `content-unchanged` and an extract over a version already in place.
public enum PayloadDigests {
    /// The digests of every payload file and the targets of every link (as `link:` + target),
    /// or nil when some file was not read in full.
    public static func of(_ package: PackageFacts) -> [String: String]? {
        var digests: [String: String] = [:]
        for entry in package.entries {
            guard let relative = entry.path.contentsRelative else { continue }
            switch entry.kind {
            case .file:
                guard let sha1 = entry.sha1 else { return nil }
                digests[relative] = sha1
            case .symlink:
                digests[relative] = "link:" + String(decoding: entry.linkTarget ?? [], as: UTF8.self)
            default:
                continue
            }
        }
        return digests
    }
}
