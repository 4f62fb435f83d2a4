import Foundation
import PkgKitIdentity

/// The list of published packages at the root of a published folder: `catalog.json` (docs/catalog.md
/// ). Parse one with `Catalog(data:)`, write one with `encoded()`.
///
/// The value keeps products and versions in the order it was given; `encoded()` always writes
/// products sorted by identifier and versions newest first, so equal catalogs give equal bytes.
public struct Catalog: Sendable, Equatable {
    /// The value of the `format` key.
    public static let format = "pkgtool-catalog"
    /// The only `formatVersion` this reader understands.
    public static let formatVersion = 1
    /// The catalog's file name in a published folder.
    public static let fileName = "catalog.json"
    /// The file beside the catalog where pkgtool before signature files named by digest kept
    /// the one signature: no longer read nor written; `publish --sign` removes it.
    public static let legacySignatureFileName = "catalog.json.sig"
    /// The largest catalog accepted (64 MiB, docs/catalog.md): a bigger body is cut off and refused
    /// (`invalid-catalog`) before it is parsed, so a hostile or broken server cannot make a client
    /// hold an endless catalog in memory.
    public static let maximumBytes = 64 << 20

    /// Every product, each with its published versions.
    public var products: [CatalogProduct]

    /// A catalog holding `products`.
    public init(products: [CatalogProduct] = []) {
        self.products = products
    }

    /// The product with this identifier, if the catalog lists it.
    public func product(_ productIdentifier: String) -> CatalogProduct? {
        products.first { $0.productIdentifier == productIdentifier }
    }
}

/// One product of a catalog: its identifier, the version clients should have, and every
/// version still published.
public struct CatalogProduct: Sendable, Equatable {
    /// The IAPProductIdentifier (its format is in docs/format.md).
    public var productIdentifier: String
    /// The version clients should have; always one of `versions`.
    public var latest: ContentVersion
    /// The published versions.
    public var versions: [CatalogVersion]

    /// A product entry. `latest` must be one of `versions` for the catalog to be valid.
    public init(productIdentifier: String, latest: ContentVersion, versions: [CatalogVersion]) {
        self.productIdentifier = productIdentifier
        self.latest = latest
        self.versions = versions
    }

    /// The entry of `version` (compared numerically: `1.0` finds `1.0.0`), if published.
    public func version(_ version: ContentVersion) -> CatalogVersion? {
        versions.first { $0.contentVersion == version }
    }

    /// The entry `latest` names.
    public var latestVersion: CatalogVersion? { version(latest) }
}

/// One published package: where it is and what its bytes must be.
public struct CatalogVersion: Sendable, Equatable {
    /// The package's ContentVersion, spelled as in its ContentInfo.plist.
    public var contentVersion: ContentVersion
    /// Where the package is: relative to the catalog's own URL, or an absolute http(s) URL.
    public var url: String
    /// The package file's size in bytes.
    public var size: Int64
    /// Lowercase hex sha256 of the whole package file.
    public var sha256: String
    /// Lowercase hex sha256 of a xar package's bytes `0 ..< header size + compressed TOC length`;
    /// nil for any other container.
    public var tocSHA256: String?
    /// Regular files under `Contents/`.
    public var fileCount: Int
    /// Sum of the sizes of those files.
    public var payloadBytes: Int64

    /// A version entry.
    public init(contentVersion: ContentVersion, url: String, size: Int64, sha256: String, tocSHA256: String?,
                fileCount: Int, payloadBytes: Int64) {
        self.contentVersion = contentVersion
        self.url = url
        self.size = size
        self.sha256 = sha256
        self.tocSHA256 = tocSHA256
        self.fileCount = fileCount
        self.payloadBytes = payloadBytes
    }

    /// The package's absolute URL: `url` resolved against the catalog's URL (`http(s)://` or
    /// `file://`). nil when `url` is neither a relative reference nor an http(s) URL.
    public func resolvedURL(relativeTo catalogURL: URL) -> URL? {
        guard CatalogVersion.isAcceptableReference(url) else { return nil }
        return URL(string: url, relativeTo: catalogURL)?.absoluteURL
    }

    /// True for a relative reference without a scheme or authority (`com.x/1.0.pkg`), or an
    /// absolute `http://` or `https://` URL with a host.
    static func isAcceptableReference(_ text: String) -> Bool {
        guard !text.isEmpty, !text.hasPrefix("//"), let parsed = URL(string: text) else { return false }
        guard let scheme = parsed.scheme?.lowercased() else { return true }
        return (scheme == "http" || scheme == "https") && !(parsed.host ?? "").isEmpty
    }
}
