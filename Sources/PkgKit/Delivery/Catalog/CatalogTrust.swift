import PkgKitSupport

/// Which catalogs a client accepts: those signed with a trusted key, or, only when the caller
/// says so, any catalog, signed or not.
///
/// There is no default: an app that ships its publisher's public key writes
/// `.signed(by: key)`, and one that accepts whatever its server sends writes `.unsigned`, so
/// an empty list of keys never silently turns the signature check off.
public struct CatalogTrust: Sendable, Equatable {
    /// The keys a line of the signature file must verify with; empty only for `unsigned`.
    public let keys: [CatalogVerifyingKey]

    private init(keys: [CatalogVerifyingKey]) {
        self.keys = keys
    }

    /// Catalogs whose signature file has a line that verifies with `key` or any of `more` (a
    /// folder signed with an old and a new key verifies with either).
    public static func signed(by key: CatalogVerifyingKey, _ more: CatalogVerifyingKey...) -> CatalogTrust {
        CatalogTrust(keys: [key] + more)
    }

    /// Catalogs signed with any of `keys`; nil when `keys` is empty, which trusts nothing.
    public static func signed(byAnyOf keys: [CatalogVerifyingKey]) -> CatalogTrust? {
        keys.isEmpty ? nil : CatalogTrust(keys: keys)
    }

    /// Any catalog, signed or not: its signature is looked for only to report whether there is
    /// one (`CatalogSignatureStatus.unchecked` or `.absent`).
    public static let unsigned = CatalogTrust(keys: [])

    /// True for `unsigned`.
    public var isUnsigned: Bool { keys.isEmpty }
}
