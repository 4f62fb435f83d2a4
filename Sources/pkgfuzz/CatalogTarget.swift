import Foundation
import PkgKit

/// The catalog target: any bytes through `Catalog(data:)`, the parser every sync runs first on
/// what a server sent. A catalog it accepts must encode to bytes it accepts again as the same
/// catalog, and encode again to the same bytes (what `publish` relies on to leave a folder as
/// it was); anything else it must refuse with its own error, never by trapping.
enum CatalogTarget {
    /// Runs one input.
    static func run(_ input: [UInt8]) {
        guard let catalog = try? Catalog(data: Data(input)) else { return }
        let encoded = catalog.encoded()
        guard let again = try? Catalog(data: encoded) else { fail("an accepted catalog encodes to bytes it refuses") }
        guard again.products.count == catalog.products.count else { fail("the catalog lost products in a round trip") }
        for (product, back) in zip(catalog.products.sorted { $0.productIdentifier.utf8.lexicographicallyPrecedes($1.productIdentifier.utf8) },
                                   again.products) {
            guard product.productIdentifier == back.productIdentifier, product.latest == back.latest,
                  Set(product.versions.map(\.contentVersion)) == Set(back.versions.map(\.contentVersion)) else {
                fail("product \(product.productIdentifier) changed in a round trip")
            }
            for version in product.versions where back.version(version.contentVersion) != version {
                fail("version \(version.contentVersion) of \(product.productIdentifier) changed in a round trip")
            }
        }
        guard again.encoded() == encoded else { fail("encoding is not stable") }
    }

    /// Reports a broken promise and aborts: libFuzzer keeps the input.
    private static func fail(_ problem: String) -> Never {
        FuzzTarget.fail("catalog oracle: \(problem)")
    }

    /// The seeds: a catalog as `publish` writes it, with a second product, a null `tocSHA256`
    /// and an absolute URL.
    static func seeds() -> [String: [UInt8]] {
        let digest = String(repeating: "ab", count: 32)
        let version = CatalogVersion(contentVersion: ContentVersion("1.1")!, url: "com.example.a/1.1.pkg", size: 2488, sha256: digest,
                                     tocSHA256: digest, fileCount: 2, payloadBytes: 2331)
        var older = version
        older.contentVersion = ContentVersion("1.0")!
        older.url = "https://cdn.example.com/content/com.example.a/1.0.pkg"
        older.tocSHA256 = nil
        let catalog = Catalog(products: [CatalogProduct(productIdentifier: "com.example.a", latest: version.contentVersion, versions: [version, older]),
                                         CatalogProduct(productIdentifier: "com.example.b.chapter-2", latest: older.contentVersion, versions: [older])])
        return ["catalog-published.json": Array(catalog.encoded()),
                "catalog-empty.json": Array(Catalog().encoded())]
    }
}
