/// Why writing a package failed.
public enum WriteError: Error, Sendable {
    /// zlib refused the data (should not happen on valid input).
    case compression(String)
    /// The system refused a read or write; exit 2.
    case io(path: String, String)
    /// A source file changed while the package was being written.
    case sourceChanged(path: String)
}
