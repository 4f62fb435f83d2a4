import Foundation
import PkgKitSupport
import PkgKitIdentity

extension Catalog {
    /// The catalog's bytes, which depend only on its entries: products sorted by identifier
    /// (bytewise), versions newest first (numeric ContentVersion order), keys in the order of
    /// the example in docs/catalog.md, two-space indentation, a trailing newline; no times, no host
    /// names. Equal catalogs give equal bytes whatever the order they were built in.
    public func encoded() -> Data {
        var out = "{\n"
        out += "  \"format\": \(jsonStringLiteral(Catalog.format)),\n"
        out += "  \"formatVersion\": \(Catalog.formatVersion),\n"
        let products = products.sorted { $0.productIdentifier.utf8.lexicographicallyPrecedes($1.productIdentifier.utf8) }
        if products.isEmpty {
            out += "  \"products\": []\n"
        } else {
            out += "  \"products\": [\n"
            for (index, product) in products.enumerated() {
                out += "    {\n"
                out += "      \"productIdentifier\": \(jsonStringLiteral(product.productIdentifier)),\n"
                out += "      \"latest\": \(jsonStringLiteral(product.latest.description)),\n"
                out += "      \"versions\": [\n"
                let versions = product.versions.sorted { $0.contentVersion > $1.contentVersion }
                for (number, version) in versions.enumerated() {
                    out += "        {\n"
                    out += "          \"contentVersion\": \(jsonStringLiteral(version.contentVersion.description)),\n"
                    out += "          \"url\": \(jsonStringLiteral(version.url)),\n"
                    out += "          \"size\": \(version.size),\n"
                    out += "          \"sha256\": \(jsonStringLiteral(version.sha256)),\n"
                    out += "          \"tocSHA256\": \(version.tocSHA256.map(jsonStringLiteral) ?? "null"),\n"
                    out += "          \"fileCount\": \(version.fileCount),\n"
                    out += "          \"payloadBytes\": \(version.payloadBytes)\n"
                    out += number == versions.count - 1 ? "        }\n" : "        },\n"
                }
                out += "      ]\n"
                out += index == products.count - 1 ? "    }\n" : "    },\n"
            }
            out += "  ]\n"
        }
        out += "}\n"
        return Data(out.utf8)
    }
}
