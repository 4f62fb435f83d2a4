import PkgKitDiagnostics
import PkgKitFormat

/// Why `validate` could not judge any package: the previous package they update holds no
/// version to compare with (`unreadable-input`, a failure).
public struct ValidationFailure: DiagnosableError, Sendable, Equatable {
    /// The previous package.
    public var previous: String

    public var diagnostic: Diagnostic {
        Diagnostic(.unreadableInput, path: previous, "the previous package has no readable ContentInfo.plist")
    }

    public var disposition: ErrorDisposition { .failed }
}
