import Foundation
import PkgKitDiagnostics
import PkgKitIdentity

extension Catalog {
    /// Parses `catalog.json`'s bytes, refusing as a whole anything that is not the catalog's
    /// shape: not JSON (an HTML error page, a truncated file), another `format` or
    /// `formatVersion`, a product identifier or version that breaks the formats of docs/format.md, a
    /// sha256 that is not 64 hex digits, a negative size or count, a `latest` that is not among
    /// the versions, a product or version listed twice, a `url` that is neither relative nor
    /// http(s), or more than `Catalog.maximumBytes`. Keys it does not know are ignored.
    public init(data: Data) throws(CatalogError) {
        guard data.count <= Catalog.maximumBytes else {
            throw CatalogError("it is \(data.count) bytes, over the \(Catalog.maximumBytes)-byte limit")
        }
        let first = data.first { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }
        guard let first else { throw CatalogError("it is empty") }
        if first == UInt8(ascii: "<") {
            throw CatalogError("it is an HTML or XML page, not JSON: the server probably answered with an error page; check the catalog's URL")
        }
        let raw: RawCatalog
        do {
            raw = try JSONDecoder().decode(RawCatalog.self, from: data)
        } catch let error as DecodingError {
            // Foundation reports a fraction where a whole number belongs as invalid JSON.
            if case .dataCorrupted(let context) = error, context.codingPath.isEmpty,
               (try? JSONSerialization.jsonObject(with: data)) != nil {
                throw CatalogError("a value has the wrong type: sizes and counts must be whole numbers, the other values strings")
            }
            throw CatalogError(Self.describe(error))
        } catch {
            throw CatalogError("it is not valid JSON: \(error)")
        }
        guard let format = raw.format else { throw CatalogError("the key 'format' is missing") }
        guard format == Catalog.format else {
            throw CatalogError("'format' is '\(PathDisplay.printable(format))', not '\(Catalog.format)'")
        }
        guard let formatVersion = raw.formatVersion else { throw CatalogError("the key 'formatVersion' is missing") }
        guard formatVersion == Catalog.formatVersion else {
            throw CatalogError("'formatVersion' is \(formatVersion); this pkgtool reads version \(Catalog.formatVersion) only: update pkgtool")
        }
        guard let rawProducts = raw.products else { throw CatalogError("the key 'products' is missing") }
        var seen: Set<String> = []
        var products: [CatalogProduct] = []
        products.reserveCapacity(rawProducts.count)
        for (index, rawProduct) in rawProducts.enumerated() {
            let product = try Self.product(rawProduct, index: index)
            guard seen.insert(product.productIdentifier).inserted else {
                throw CatalogError("product \(product.productIdentifier) is listed twice")
            }
            products.append(product)
        }
        self.init(products: products)
    }

    private static func product(_ raw: RawProduct, index: Int) throws(CatalogError) -> CatalogProduct {
        guard let id = raw.productIdentifier else { throw CatalogError("products[\(index)]: the key 'productIdentifier' is missing") }
        if let problem = ProductIdentifier.problem(with: id) { throw CatalogError("products[\(index)]: \(problem)") }
        guard let latestText = raw.latest else { throw CatalogError("product \(id): the key 'latest' is missing") }
        guard let latest = ContentVersion(latestText) else {
            throw CatalogError("product \(id): 'latest' \(ContentVersion.problem(with: PathDisplay.printable(latestText)) ?? latestText)")
        }
        guard let rawVersions = raw.versions else { throw CatalogError("product \(id): the key 'versions' is missing") }
        var versions: [CatalogVersion] = []
        versions.reserveCapacity(rawVersions.count)
        for (number, rawVersion) in rawVersions.enumerated() {
            let version = try Self.version(rawVersion, product: id, index: number)
            if versions.contains(where: { $0.contentVersion == version.contentVersion }) {
                throw CatalogError("product \(id): version \(version.contentVersion) is listed twice")
            }
            versions.append(version)
        }
        guard versions.contains(where: { $0.contentVersion == latest }) else {
            throw CatalogError("product \(id): 'latest' is \(latest), which is not among its versions")
        }
        return CatalogProduct(productIdentifier: id, latest: latest, versions: versions)
    }

    private static func version(_ raw: RawVersion, product id: String, index: Int) throws(CatalogError) -> CatalogVersion {
        let place = "product \(id): versions[\(index)]"
        func require<T>(_ value: T?, _ key: String) throws(CatalogError) -> T {
            guard let value else { throw CatalogError("\(place): the key '\(key)' is missing") }
            return value
        }
        let text = try require(raw.contentVersion, "contentVersion")
        guard let contentVersion = ContentVersion(text) else {
            throw CatalogError("\(place): 'contentVersion' \(ContentVersion.problem(with: PathDisplay.printable(text)) ?? text)")
        }
        let where_ = "product \(id): version \(contentVersion)"
        let url = try require(raw.url, "url")
        guard CatalogVersion.isAcceptableReference(url) else {
            throw CatalogError("\(where_): 'url' '\(PathDisplay.printable(url))' is neither a relative reference nor an http(s) URL")
        }
        let size = try require(raw.size, "size")
        let sha256 = try require(raw.sha256, "sha256")
        let fileCount = try require(raw.fileCount, "fileCount")
        let payloadBytes = try require(raw.payloadBytes, "payloadBytes")
        for (key, value) in [("size", size), ("fileCount", Int64(fileCount)), ("payloadBytes", payloadBytes)] where value < 0 {
            throw CatalogError("\(where_): '\(key)' is negative (\(value))")
        }
        guard isSHA256(sha256) else {
            throw CatalogError("\(where_): 'sha256' is not 64 hexadecimal digits")
        }
        if let toc = raw.tocSHA256, !isSHA256(toc) {
            throw CatalogError("\(where_): 'tocSHA256' is neither null nor 64 hexadecimal digits")
        }
        return CatalogVersion(contentVersion: contentVersion, url: url, size: size, sha256: sha256.lowercased(),
                              tocSHA256: raw.tocSHA256?.lowercased(), fileCount: fileCount, payloadBytes: payloadBytes)
    }

    /// True for exactly 64 hexadecimal digits (either case).
    static func isSHA256(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
        }
    }

    /// A decoding failure in words: where in the document, and what was expected.
    private static func describe(_ error: DecodingError) -> String {
        func place(_ path: [any CodingKey]) -> String {
            var text = ""
            for key in path {
                if let index = key.intValue { text += "[\(index)]" } else { text += (text.isEmpty ? "" : ".") + key.stringValue }
            }
            return text.isEmpty ? "the document" : "'\(text)'"
        }
        switch error {
        case .typeMismatch(let type, let context), .valueNotFound(let type, let context):
            let expected = type == String.self ? "a string" : (type == Int.self || type == Int64.self) ? "a whole number"
                : "\(type)".hasPrefix("Array") ? "an array" : "an object"
            return "\(place(context.codingPath)) is not \(expected)"
        case .dataCorrupted(let context) where context.codingPath.isEmpty:
            return "it is not valid JSON (truncated or damaged)"
        case .dataCorrupted(let context):
            return "\(place(context.codingPath)) is not a valid value"
        case .keyNotFound(let key, let context):
            return "\(place(context.codingPath + [key])) is missing"
        @unknown default:
            return "it is not valid JSON"
        }
    }
}

// The document as written, every key optional, so that a missing key and a key of the wrong
// type get their own messages; unknown keys are ignored by construction.
private struct RawCatalog: Decodable {
    var format: String?
    var formatVersion: Int?
    var products: [RawProduct]?
}

private struct RawProduct: Decodable {
    var productIdentifier: String?
    var latest: String?
    var versions: [RawVersion]?
}

private struct RawVersion: Decodable {
    var contentVersion: String?
    var url: String?
    var size: Int64?
    var sha256: String?
    var tocSHA256: String?
    var fileCount: Int?
    var payloadBytes: Int64?
}
