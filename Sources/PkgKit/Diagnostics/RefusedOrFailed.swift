
/// A status with a `refused` and a `failed` case, between which an error's disposition chooses:
/// the one place where a refusal or a failure becomes a status, whatever the status type.
public protocol RefusedOrFailed {
    /// The input was judged and refused.
    static var refused: Self { get }
    /// The work could not be done.
    static var failed: Self { get }
}

extension RefusedOrFailed {
    /// `refused` for a refusal, `failed` for a failure.
    public init(_ disposition: ErrorDisposition) {
        self = disposition == .refused ? .refused : .failed
    }

    /// The status `error` ends with: as its disposition says.
    public init(_ error: any DiagnosableError) {
        self.init(error.disposition)
    }
}
