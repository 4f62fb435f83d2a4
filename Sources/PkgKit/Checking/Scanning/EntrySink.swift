import PkgKitFormat

/// Receives every entry, and the bytes of every file, as the scanner reads them: how the
/// installer writes a package in the same pass that verifies it.
public protocol EntrySink: AnyObject {
    /// A new entry starts (its data, if any, follows through `write`).
    func begin(_ entry: ArchiveEntry) throws
    /// The next bytes of the current file.
    func write(_ chunk: UnsafeRawBufferPointer) throws
    /// The current entry is complete.
    func end() throws
}
