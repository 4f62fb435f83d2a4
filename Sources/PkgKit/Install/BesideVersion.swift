/// A kind of file kept beside each version folder of a product, named by its prefix and the
/// version (the stat cache, the chunk index): it goes with its version folder, and one whose
/// folder is gone, or one half-written, is a leftover.
package struct BesideVersion: Sendable {
    /// What every such file's name starts with.
    let prefix: String

    /// The file's name for version folder `version`.
    package func fileName(_ version: String) -> String { prefix + version }

    /// True for such a file (or a half-written one) whose version folder is not among `versions`.
    func isLeftover(_ name: String, versions: Set<String>) -> Bool {
        guard name.hasPrefix(prefix) else { return false }
        let version = name.dropFirst(prefix.count)
        return version.contains(".tmp-") || !versions.contains(String(version))
    }

    /// Removes the file of version folder `version`, if any.
    package func remove(_ product: ProductFolder, version: String) {
        try? product.remove(fileName(version))
    }

    /// Every kind there is.
    static let all = [StatCache.beside, ChunkIndex.beside]
}
