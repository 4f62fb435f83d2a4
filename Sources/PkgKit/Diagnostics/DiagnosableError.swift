
/// An error that knows how to report itself: the diagnostic a report shows for it, and whether
/// it is a refusal or a failure. Every error PkgKit throws to a caller conforms, so that a front
/// end maps errors to its own outcomes (for `pkgtool`, exit statuses) in one place, without
/// knowing each error type.
public protocol DiagnosableError: Error {
    /// The diagnostic a report shows for this error: its code, the file or entry concerned, and
    /// a message that says what to do.
    var diagnostic: Diagnostic { get }
    /// Whether the error is a refusal (the input breaks a rule or is not what it claims: a
    /// person must act) or a failure (the work could not be done: missing input, I/O error,
    /// an unreachable server; it may pass by itself).
    var disposition: ErrorDisposition { get }
}

/// What kind of "no" an error is (docs/exit-codes.md: refusals exit 1, failures exit 2).
public enum ErrorDisposition: String, Sendable, Codable {
    /// The input was judged and refused.
    case refused
    /// The work could not be done.
    case failed
}
