
/// What is known about a fetched catalog's signature (`FetchedCatalog.signature`).
///
/// With trusted keys a catalog is either `verified` or refused, so the other two values arise
/// only when no key is trusted: then the signature file is still looked for, so that a front
/// end can say once that a signed catalog was accepted without checking its signature, and how
/// to check it (ship the public key, `sync --trust KEY.pub.pem`).
public enum CatalogSignatureStatus: String, Sendable, Codable, Equatable {
    /// A line of `signatures/<sha256>.sig` verified with a trusted key.
    case verified
    /// No key was trusted, and `signatures/<sha256>.sig` exists for these bytes and holds a
    /// signature line: the catalog is signed, but the signature was not checked.
    case unchecked
    /// No key was trusted, and no signature file was found for these bytes (none published, or
    /// it could not be fetched: looking for it never fails a sync).
    case absent
}
