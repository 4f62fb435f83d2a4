
/// A report's property that its JSON leaves out: a typed value kept for a front end's own words
/// (the transport failure behind a diagnostic), while the JSON keeps the shape the command
/// line documents. Synthesised `Encodable` conformance writes nothing for it, not even its key.
@propertyWrapper
public struct NotInJSON<Value: Sendable & Equatable>: Sendable, Equatable, Encodable {
    /// The value.
    public var wrappedValue: Value

    /// Wraps `wrappedValue`.
    public init(wrappedValue: Value) {
        self.wrappedValue = wrappedValue
    }

    /// Writes nothing (the container's `encode(_:forKey:)` below skips the key as well).
    public func encode(to encoder: any Encoder) throws {}
}

extension KeyedEncodingContainer {
    /// Skips a `@NotInJSON` property: what keeps its key out of a synthesised encoding.
    public mutating func encode<Value>(_ value: NotInJSON<Value>, forKey key: Key) throws {}
}
