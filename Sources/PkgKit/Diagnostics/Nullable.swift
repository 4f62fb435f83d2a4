
/// An optional that a report's JSON always carries: `nil` is written as `null`, never left out.
///
/// docs/json.md says absent values are `null`, while `Codable`'s synthesised encoding drops the
/// key of a nil optional. Marking such a property `@Nullable` keeps the synthesised
/// `Codable` conformance and writes the key either way; reading accepts `null` and a missing key
/// alike. Any report type, of any layer, uses it the same way:
///
/// ```swift
/// struct Report: Codable {
///     var status: String
///     @Nullable var previousVersion: String?
/// }
/// ```
@propertyWrapper
public struct Nullable<Value> {
    /// The value, or nil for `null`.
    public var wrappedValue: Value?

    /// Wraps `wrappedValue`.
    public init(wrappedValue: Value?) {
        self.wrappedValue = wrappedValue
    }
}

extension Nullable: Encodable where Value: Encodable {
    /// Writes the value, or `null`.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        if let wrappedValue {
            try container.encode(wrappedValue)
        } else {
            try container.encodeNil()
        }
    }
}

extension Nullable: Decodable where Value: Decodable {
    /// Reads the value, or nil for `null`.
    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        wrappedValue = container.decodeNil() ? nil : try container.decode(Value.self)
    }
}

extension KeyedDecodingContainer {
    /// A missing key reads as nil, as it would for a plain optional: what lets synthesised
    /// decoding of a `@Nullable` property accept JSON that leaves the key out.
    public func decode<Value: Decodable>(_ type: Nullable<Value>.Type, forKey key: Key) throws -> Nullable<Value> {
        Nullable(wrappedValue: try decodeIfPresent(Value.self, forKey: key))
    }
}

extension Nullable: Equatable where Value: Equatable {}
extension Nullable: Hashable where Value: Hashable {}
extension Nullable: Sendable where Value: Sendable {}
