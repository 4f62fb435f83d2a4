import Foundation
import PkgKitSupport

/// The two keys of ContentInfo.plist, as read from a package or written by `create`.
public struct ContentInfo: Sendable, Equatable, Codable {
    /// The `ContentVersion` key, as written.
    public var contentVersion: String
    /// The `IAPProductIdentifier` key.
    public var productIdentifier: String

    package enum CodingKeys: String, CodingKey {
        case contentVersion = "ContentVersion"
        case productIdentifier = "IAPProductIdentifier"
    }

    /// The keys ContentInfo.plist is meant to hold.
    public static let knownKeys: Set<String> = ["ContentVersion", "IAPProductIdentifier"]
    /// The file's name at the package root.
    public static let fileName = "ContentInfo.plist"

    public init(contentVersion: String, productIdentifier: String) {
        self.contentVersion = contentVersion
        self.productIdentifier = productIdentifier
    }

    /// An XML property list holding exactly these two keys, byte-identical for equal values.
    public func xmlData() throws -> Data {
        let encoder = PropertyListEncoder()
        encoder.outputFormat = .xml
        return try encoder.encode(self)
    }
}

/// What a ContentInfo.plist's bytes turned out to hold, problems included.
public struct ParsedContentInfo: Sendable, Equatable {
    /// `ContentVersion` when present and a string.
    public var contentVersion: String?
    /// `IAPProductIdentifier` when present and a string.
    public var productIdentifier: String?
    /// Keys other than the two known ones, sorted.
    public var unknownKeys: [String] = []
    /// Set when the data is not a dictionary property list, or a known key has the wrong type.
    public var invalidReason: String?
    /// Known keys that are missing.
    public var missingKeys: [String] = []

    /// Reads an XML or binary property list.
    public init(data: Data) {
        // Foundation's parser is only asked about data that can be a plist at all: it is slow
        // to fail, and leaks a little on each failure, which adds up under a fuzzer or a server.
        guard Self.mayBePropertyList(data) else {
            invalidReason = "does not parse as a property list: write it as an XML or binary plist"
            return
        }
        let object: Any
        do {
            object = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
        } catch {
            invalidReason = "does not parse as a property list: write it as an XML or binary plist"
            return
        }
        guard let dictionary = object as? [String: Any] else {
            invalidReason = "is not a dictionary: its top level must be <dict> with ContentVersion and IAPProductIdentifier"
            return
        }
        var wrongTypes: [String] = []
        for key in ContentInfo.knownKeys.sorted() {
            guard let value = dictionary[key] else { missingKeys.append(key); continue }
            guard let text = value as? String else { wrongTypes.append(key); continue }
            if key == "ContentVersion" { contentVersion = text } else { productIdentifier = text }
        }
        if !wrongTypes.isEmpty {
            invalidReason = "key \(wrongTypes.joined(separator: " and ")) must be a <string>"
        }
        unknownKeys = dictionary.keys.filter { !ContentInfo.knownKeys.contains($0) }.sorted()
    }

    /// A binary plist starts with `bplist`; an XML one (after an optional BOM and white space)
    /// with `<`.
    /// XML must also be well-formed, which libxml2 checks without leaking.
    static func mayBePropertyList(_ data: Data) -> Bool {
        if data.starts(with: Array("bplist".utf8)) { return true }
        var bytes = data[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        let first = bytes.first { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }
        return first == UInt8(ascii: "<") && XMLWellFormedness.isWellFormed(data)
    }

    /// The missing known key that `unknown` is a near miss of (`IAPProductionIdentifier` for
    /// `IAPProductIdentifier`), if any.
    public func intendedKey(for unknown: String) -> String? {
        NearestName.suggestion(for: unknown, among: missingKeys)
    }

    /// The unknown key that is a near miss of the missing `key`, if any.
    public func misspelling(of key: String) -> String? {
        unknownKeys.first { intendedKey(for: $0) == key }
    }

    /// The two keys when both are present as strings.
    public var contentInfo: ContentInfo? {
        guard let contentVersion, let productIdentifier else { return nil }
        return ContentInfo(contentVersion: contentVersion, productIdentifier: productIdentifier)
    }
}
