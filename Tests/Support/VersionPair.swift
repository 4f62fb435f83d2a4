import Foundation

/// Two versions of one product, as the tests of an update want them: a large file both share,
/// one file whose bytes change from the first to the second, and ten small pages.
public struct VersionPair: Sendable {
    /// `v10.pkg` (1.0) and its source's Contents/ folder (`src-v10/Contents`).
    public let v10: (pkg: String, contents: String)
    /// `v11.pkg` (1.1), which changes `changing.bin` only, and its source's Contents/ folder.
    public let v11: (pkg: String, contents: String)

    /// Builds both packages of `id` in `scratch` with `pkgtool create`: `big.bin` of `big`
    /// pseudo-random bytes, `changing.bin` of `changing`, and `pages/p0.txt` … `p9.txt`.
    public init(in scratch: Scratch, id: String, big: Int = 400_000, changing: Int = 100_000) throws {
        var files: [String: Data] = ["big.bin": pseudoRandomData(big, seed: 1), "changing.bin": pseudoRandomData(changing, seed: 2)]
        for index in 0 ..< 10 { files["pages/p\(index).txt"] = Data("page \(index)\n".utf8) }
        v10 = try scratch.package("v10", id: id, version: "1.0", files: files)
        files["changing.bin"] = pseudoRandomData(changing, seed: 3)
        v11 = try scratch.package("v11", id: id, version: "1.1", files: files)
    }
}
