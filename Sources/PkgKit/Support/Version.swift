/// What release of PkgKit (and of the `pkgtool` built with it) this is.
public enum PkgKitVersion {
    /// The version, as `pkgtool --version` prints it and the README states it. This is the one
    /// place it is written; a test checks the README against it.
    public static let current = "0.2.0"
}
