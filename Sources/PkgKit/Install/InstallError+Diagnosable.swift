extension InstallError: DiagnosableError {
    /// `io-error`: the product folder could not be written.
    public var diagnostic: Diagnostic { Diagnostic(.ioError, path: nil, description) }

    /// Always a failure: the package was not judged.
    public var disposition: ErrorDisposition { .failed }
}
