extension ReadError: DiagnosableError {
    /// A package that cannot be read as one is refused; input the system would not read is a failure.
    public var disposition: ErrorDisposition {
        if case .io = self { return .failed }
        return .refused
    }
}
