
/// A ContentVersion: 1 to 3 dot-separated non-negative integers below 2^31, no leading zeros.
///
/// Versions compare numerically component by component, a missing component counting as 0,
/// so `1.0 == 1.0.0 < 1.0.1 < 1.10`. The original spelling is kept for folder names.
public struct ContentVersion: Sendable, Hashable, Comparable, CustomStringConvertible, Codable {
    /// The numeric components as written (1 to 3 of them).
    public let components: [Int32]
    /// The version exactly as written in the plist, e.g. `"1.0"`.
    public let description: String

    /// Which component `bump` raises.
    public enum Part: String, Sendable, CaseIterable {
        case major, minor, patch
    }

    /// Parses `text`, or returns nil when it breaks the format.
    public init?(_ text: String) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count) else { return nil }
        var values: [Int32] = []
        for part in parts {
            guard !part.isEmpty, part.count <= 10,
                  part.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                  part == "0" || part.first != "0",
                  let value = Int32(part) else { return nil }
            values.append(value)
        }
        components = values
        description = text
    }

    private init(components: [Int32]) {
        self.components = components
        description = components.map(String.init).joined(separator: ".")
    }

    /// Why `text` is not a valid version, in words for a diagnostic; nil when it is valid.
    public static func problem(with text: String) -> String? {
        if ContentVersion(text) != nil { return nil }
        return "'\(text)' is not a ContentVersion: use 1 to 3 dot-separated whole numbers below 2147483648 without leading zeros, like 1.0 or 2.13.4"
    }

    private func component(_ index: Int) -> Int32 {
        index < components.count ? components[index] : 0
    }

    public static func == (lhs: ContentVersion, rhs: ContentVersion) -> Bool {
        (0..<3).allSatisfy { lhs.component($0) == rhs.component($0) }
    }

    public func hash(into hasher: inout Hasher) {
        for index in 0..<3 { hasher.combine(component(index)) }
    }

    public static func < (lhs: ContentVersion, rhs: ContentVersion) -> Bool {
        for index in 0..<3 where lhs.component(index) != rhs.component(index) {
            return lhs.component(index) < rhs.component(index)
        }
        return false
    }

    /// The next version: `1.2` bumps to major `2.0`, minor `1.3`, patch `1.2.1`.
    /// Returns nil when the raised component would pass 2^31 − 1.
    public func bumped(_ part: Part) -> ContentVersion? {
        let major = component(0), minor = component(1), patch = component(2)
        switch part {
        case .major:
            guard major < Int32.max else { return nil }
            return ContentVersion(components: [major + 1, 0])
        case .minor:
            guard minor < Int32.max else { return nil }
            return ContentVersion(components: [major, minor + 1])
        case .patch:
            guard patch < Int32.max else { return nil }
            return ContentVersion(components: [major, minor, patch + 1])
        }
    }

    public init(from decoder: Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let version = ContentVersion(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: ContentVersion.problem(with: text) ?? text))
        }
        self = version
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(description)
    }
}
