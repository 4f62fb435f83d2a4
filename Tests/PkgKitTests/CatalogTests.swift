import Foundation
import Testing
@testable import PkgKit

private let hexA = String(repeating: "a", count: 64)
private let hexB = String(repeating: "b", count: 64)

private func version(_ text: String, id: String = "com.example.book", toc: String? = hexB) -> CatalogVersion {
    CatalogVersion(contentVersion: ContentVersion(text)!, url: "\(id)/\(text).pkg", size: 2488, sha256: hexA,
                   tocSHA256: toc, fileCount: 2, payloadBytes: 2331)
}

/// A catalog document with one product whose version entry is `entry` (JSON text).
private func document(entry: String, latest: String = "1.0", id: String = "com.example.book") -> Data {
    Data("""
    {"format": "pkgtool-catalog", "formatVersion": 1, "products": [
      {"productIdentifier": "\(id)", "latest": "\(latest)", "versions": [\(entry)]}]}
    """.utf8)
}

private let goodEntry = """
{"contentVersion": "1.0", "url": "com.example.book/1.0.pkg", "size": 10, "sha256": "\(hexA)", "tocSHA256": null, "fileCount": 1, "payloadBytes": 5}
"""

@Suite struct CatalogTests {
    @Test func encodesExactlyAsSpecified() throws {
        let catalog = Catalog(products: [
            CatalogProduct(productIdentifier: "com.example.book.chapter2", latest: ContentVersion("1.0")!,
                           versions: [version("1.0", id: "com.example.book.chapter2", toc: nil)]),
            CatalogProduct(productIdentifier: "com.example.book.chapter1", latest: ContentVersion("1.10")!,
                           versions: [version("1.9", id: "com.example.book.chapter1"), version("1.10", id: "com.example.book.chapter1")]),
        ])
        let expected = """
        {
          "format": "pkgtool-catalog",
          "formatVersion": 1,
          "products": [
            {
              "productIdentifier": "com.example.book.chapter1",
              "latest": "1.10",
              "versions": [
                {
                  "contentVersion": "1.10",
                  "url": "com.example.book.chapter1/1.10.pkg",
                  "size": 2488,
                  "sha256": "\(hexA)",
                  "tocSHA256": "\(hexB)",
                  "fileCount": 2,
                  "payloadBytes": 2331
                },
                {
                  "contentVersion": "1.9",
                  "url": "com.example.book.chapter1/1.9.pkg",
                  "size": 2488,
                  "sha256": "\(hexA)",
                  "tocSHA256": "\(hexB)",
                  "fileCount": 2,
                  "payloadBytes": 2331
                }
              ]
            },
            {
              "productIdentifier": "com.example.book.chapter2",
              "latest": "1.0",
              "versions": [
                {
                  "contentVersion": "1.0",
                  "url": "com.example.book.chapter2/1.0.pkg",
                  "size": 2488,
                  "sha256": "\(hexA)",
                  "tocSHA256": null,
                  "fileCount": 2,
                  "payloadBytes": 2331
                }
              ]
            }
          ]
        }

        """
        #expect(String(decoding: catalog.encoded(), as: UTF8.self) == expected)
        // The order the entries were built in does not matter.
        var shuffled = catalog
        shuffled.products.reverse()
        shuffled.products[1].versions.reverse()
        #expect(shuffled.encoded() == catalog.encoded())
        #expect(try Catalog(data: catalog.encoded()).encoded() == catalog.encoded())
        #expect(Catalog().encoded() == Data("{\n  \"format\": \"pkgtool-catalog\",\n  \"formatVersion\": 1,\n  \"products\": []\n}\n".utf8))
    }

    @Test func parsesAndIgnoresUnknownKeys() throws {
        let text = """
        {"format": "pkgtool-catalog", "formatVersion": 1, "generator": {"name": "other"}, "products": [
          {"productIdentifier": "com.example.book", "latest": "1.0", "icon": "x.png", "versions": [
            {"contentVersion": "1.0", "url": "https://cdn.example.com/b/1.0.pkg", "size": 10, "sha256": "\(hexA.uppercased())",
             "fileCount": 1, "payloadBytes": 5, "notes": "first"}]}]}
        """
        let catalog = try Catalog(data: Data(text.utf8))
        let entry = try #require(catalog.product("com.example.book")?.latestVersion)
        #expect(entry.sha256 == hexA)
        #expect(entry.tocSHA256 == nil)
        #expect(entry.size == 10)
        #expect(catalog.product("com.example.other") == nil)
        #expect(catalog.product("com.example.book")?.version(ContentVersion("1.0.0")!) == entry)
    }

    @Test func resolvesURLsAgainstTheCatalog() throws {
        let base = URL(string: "https://cdn.example.com/content/catalog.json")!
        var entry = version("1.0")
        #expect(entry.resolvedURL(relativeTo: base)?.absoluteString == "https://cdn.example.com/content/com.example.book/1.0.pkg")
        entry.url = "https://other.example.com/x/1.0.pkg"
        #expect(entry.resolvedURL(relativeTo: base)?.absoluteString == "https://other.example.com/x/1.0.pkg")
        entry.url = "com.example.book/1.0.pkg"
        let local = URL(fileURLWithPath: "/srv/published/catalog.json")
        #expect(entry.resolvedURL(relativeTo: local)?.path == "/srv/published/com.example.book/1.0.pkg")
        entry.url = "file:///etc/passwd"
        #expect(entry.resolvedURL(relativeTo: base) == nil)
        let bytes = Data("{}".utf8)
        let digest = "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
        #expect(CatalogSignature.relativePath(for: bytes) == "signatures/\(digest).sig")
        #expect(CatalogSignature.url(for: bytes, catalogURL: base).absoluteString == "https://cdn.example.com/content/signatures/\(digest).sig")
        #expect(CatalogSignature.url(for: bytes, catalogURL: URL(string: "https://cdn.example.com/content/")!.appendingPathComponent("catalog.json")).absoluteString
                == "https://cdn.example.com/content/signatures/\(digest).sig")
        #expect(CatalogSignature.url(for: bytes, catalogURL: local).path == "/srv/published/signatures/\(digest).sig")
    }

    static let refusals: [(String, Data, String)] = [
        ("empty", Data(), "empty"),
        ("HTML page", Data("<!DOCTYPE html><html><body>Not Found</body></html>".utf8), "HTML"),
        ("truncated", document(entry: goodEntry).prefix(60), "not valid JSON"),
        ("not an object", Data("[1, 2]".utf8), "not an object"),
        ("wrong format", Data(#"{"format": "other", "formatVersion": 1, "products": []}"#.utf8), "'format'"),
        ("format missing", Data(#"{"formatVersion": 1, "products": []}"#.utf8), "'format' is missing"),
        ("newer formatVersion", Data(#"{"format": "pkgtool-catalog", "formatVersion": 2, "products": []}"#.utf8), "formatVersion"),
        ("formatVersion a string", Data(#"{"format": "pkgtool-catalog", "formatVersion": "1", "products": []}"#.utf8), "formatVersion"),
        ("products missing", Data(#"{"format": "pkgtool-catalog", "formatVersion": 1}"#.utf8), "'products'"),
        ("bad product id", document(entry: goodEntry, id: "com/example"), "IAPProductIdentifier"),
        ("bad latest", document(entry: goodEntry, latest: "01"), "latest"),
        ("latest not listed", document(entry: goodEntry, latest: "2.0"), "not among"),
        ("bad version", document(entry: goodEntry.replacingOccurrences(of: "\"1.0\"", with: "\"1.0.0.0\"")), "contentVersion"),
        ("short sha256", document(entry: goodEntry.replacingOccurrences(of: hexA, with: "abc")), "sha256"),
        ("sha256 not hex", document(entry: goodEntry.replacingOccurrences(of: hexA, with: String(repeating: "g", count: 64))), "sha256"),
        ("bad tocSHA256", document(entry: goodEntry.replacingOccurrences(of: "\"tocSHA256\": null", with: "\"tocSHA256\": \"xyz\"")), "tocSHA256"),
        ("negative size", document(entry: goodEntry.replacingOccurrences(of: "\"size\": 10", with: "\"size\": -1")), "negative"),
        ("negative payload", document(entry: goodEntry.replacingOccurrences(of: "\"payloadBytes\": 5", with: "\"payloadBytes\": -5")), "negative"),
        ("fractional size", document(entry: goodEntry.replacingOccurrences(of: "\"size\": 10", with: "\"size\": 10.5")), "whole numbers"),
        ("size missing", document(entry: goodEntry.replacingOccurrences(of: "\"size\": 10,", with: "")), "'size' is missing"),
        ("file url", document(entry: goodEntry.replacingOccurrences(of: "com.example.book/1.0.pkg", with: "file:///etc/passwd")), "url"),
        ("network-path url", document(entry: goodEntry.replacingOccurrences(of: "com.example.book/1.0.pkg", with: "//evil.example/x.pkg")), "url"),
        ("duplicate version", document(entry: goodEntry + "," + goodEntry.replacingOccurrences(of: "\"1.0\"", with: "\"1.0.0\"")), "twice"),
        ("duplicate product", Data("""
            {"format": "pkgtool-catalog", "formatVersion": 1, "products": [
              {"productIdentifier": "a.b", "latest": "1.0", "versions": [\(goodEntry)]},
              {"productIdentifier": "a.b", "latest": "1.0", "versions": [\(goodEntry)]}]}
            """.utf8), "twice"),
        ("too large", Data(repeating: 0x20, count: Catalog.maximumBytes + 1), "limit"),
    ]

    @Test(arguments: refusals.indices)
    func refusesAsAWhole(_ index: Int) {
        let (name, data, fragment) = Self.refusals[index]
        do {
            _ = try Catalog(data: data)
            Issue.record("\(name): accepted")
        } catch {
            #expect(error.reason.contains(fragment), "\(name): \(error.reason)")
            #expect(error.diagnostic.code == .invalidCatalog)
            #expect(error.diagnostic.severity == .error)
        }
    }

    @Test func theGoodEntryIsAccepted() throws {
        let catalog = try Catalog(data: document(entry: goodEntry))
        #expect(catalog.products.count == 1)
    }
}
