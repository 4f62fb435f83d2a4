import Foundation
import Testing
@testable import PkgKit
import TestSupport

/// Fetching a catalog: the signature is checked on the exact bytes before they are parsed, and
/// an error page is refused as a whole.
@Suite(.timeLimit(.minutes(1))) struct CatalogFetchTests {
    let folder: Scratch
    let key = CatalogSigningKey()
    let bytes: Data
    let server: FaultHTTPServer

    init() throws {
        folder = try Scratch()
        let entry = CatalogVersion(contentVersion: ContentVersion("1.0")!, url: "com.example.book/1.0.pkg", size: 3,
                                   sha256: String(repeating: "c", count: 64), tocSHA256: nil, fileCount: 1, payloadBytes: 1)
        bytes = Catalog(products: [CatalogProduct(productIdentifier: "com.example.book", latest: entry.contentVersion,
                                                  versions: [entry])]).encoded()
        try folder.write("site/catalog.json", bytes)
        try folder.write("site/catalog.json.sig", key.signatureFile(for: bytes))
        server = try FaultHTTPServer(root: folder.path("site"))
    }

    @Test func aSignedCatalogVerifies() async throws {
        defer { server.stop() }
        server.plan("catalog.json", [.status(503)])
        let fetched = try await Catalog.fetch(from: server.url("catalog.json"), using: StandardTransport(),
                                              trustedKey: key.publicKey, retryPolicy: instantRetries)
        #expect(fetched.bytes == bytes)
        #expect(fetched.verified)
        #expect(fetched.catalog.product("com.example.book")?.latest.description == "1.0")
        #expect(server.log.map(\.path) == ["/catalog.json", "/catalog.json", "/catalog.json.sig"])
    }

    @Test func aMissingOrWrongSignatureIsRefused() async throws {
        defer { server.stop() }
        await #expect(throws: SignatureError.self) {
            try await Catalog.fetch(from: server.url("catalog.json"), using: StandardTransport(),
                                    trustedKey: CatalogSigningKey().publicKey, retryPolicy: instantRetries)
        }
        try FileManager.default.removeItem(atPath: folder.path("site/catalog.json.sig"))
        do {
            _ = try await Catalog.fetch(from: server.url("catalog.json"), using: StandardTransport(),
                                        trustedKey: key.publicKey, retryPolicy: instantRetries)
            Issue.record("a missing signature must be refused")
        } catch let error as SignatureError {
            #expect(error.diagnostic.code == .badSignature)
            #expect(error.reason.contains("missing"))
        }
        // Without a trusted key, no signature is asked for.
        _ = try await Catalog.fetch(from: server.url("catalog.json"), using: StandardTransport(), retryPolicy: instantRetries)
        #expect(server.log.last?.path == "/catalog.json")
    }

    @Test func anHTMLErrorPageIsAnInvalidCatalog() async throws {
        defer { server.stop() }
        server.always("catalog.json", .htmlInsteadOfFile)
        do {
            _ = try await Catalog.fetch(from: server.url("catalog.json"), using: StandardTransport(), retryPolicy: instantRetries)
            Issue.record("an HTML page must be refused")
        } catch let error as CatalogError {
            #expect(error.diagnostic.code == .invalidCatalog)
            #expect(error.reason.contains("HTML"))
        }
        // Signed or not: the signature check fails first, on bytes that were never signed.
        await #expect(throws: SignatureError.self) {
            try await Catalog.fetch(from: server.url("catalog.json"), using: StandardTransport(),
                                    trustedKey: key.publicKey, retryPolicy: instantRetries)
        }
    }

    @Test func aLocalFolderWorksLikeAServer() async throws {
        defer { server.stop() }
        let url = try CatalogLocation.url(for: folder.path("site"))
        let fetched = try await Catalog.fetch(from: url, using: StandardTransport(), trustedKey: key.publicKey)
        #expect(fetched.bytes == bytes)
        let entry = try #require(fetched.catalog.products.first?.versions.first)
        #expect(entry.resolvedURL(relativeTo: fetched.url)?.path == folder.path("site/com.example.book/1.0.pkg"))
    }
}
