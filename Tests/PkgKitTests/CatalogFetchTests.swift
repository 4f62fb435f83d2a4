import Foundation
import Testing
@testable import PkgKit
import TestSupport

/// Fetching a catalog: its shape is checked first (an error page is refused as a whole, with a
/// trusted key too), then the signature of exactly the bytes received is fetched and checked before
/// anything is returned, or without a trusted key looked for without ever failing the fetch.
@Suite(.timeLimit(.minutes(2))) struct CatalogFetchTests {
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
        try folder.write("site/" + CatalogSignature.relativePath(for: bytes), key.signatureFile(for: bytes))
        server = try FaultHTTPServer(root: folder.path("site"))
    }

    @Test func aSignedCatalogVerifies() async throws {
        defer { server.stop() }
        server.plan("catalog.json", [.status(503)])
        let fetched = try await Catalog.fetch(from: server.url("catalog.json"), using: StandardTransport(),
                                              trust: .signed(by: key.publicKey), retryPolicy: instantRetries)
        #expect(fetched.bytes == bytes)
        #expect(fetched.signature == .verified && fetched.verified)
        #expect(fetched.signatureFile == key.signatureFile(for: bytes))
        #expect(fetched.bytesDownloaded == Int64(bytes.count + 89))
        #expect(fetched.catalog.product("com.example.book")?.latest.description == "1.0")
        #expect(server.log.map(\.path) == ["/catalog.json", "/catalog.json", "/signatures/\(sha256Hex(bytes)).sig"])
    }

    @Test func aMissingOrWrongSignatureIsRefused() async throws {
        defer { server.stop() }
        await #expect(throws: SignatureError.self) {
            try await Catalog.fetch(from: server.url("catalog.json"), using: StandardTransport(),
                                    trust: .signed(by: CatalogSigningKey().publicKey), retryPolicy: instantRetries)
        }
        try FileManager.default.removeItem(atPath: folder.path("site/" + CatalogSignature.relativePath(for: bytes)))
        do {
            _ = try await Catalog.fetch(from: server.url("catalog.json"), using: StandardTransport(),
                                        trust: .signed(by: key.publicKey), retryPolicy: instantRetries)
            Issue.record("a missing signature must be refused")
        } catch let error as SignatureError {
            #expect(error.diagnostic.code == .badSignature)
            #expect(error.diagnostic.path == server.url("signatures/\(sha256Hex(bytes)).sig").absoluteString)
            #expect(error.reason.contains("missing"))
        }
        // Without a trusted key, the signature is looked for, and its absence is no failure.
        let unchecked = try await Catalog.fetch(from: server.url("catalog.json"), using: StandardTransport(), trust: .unsigned, retryPolicy: instantRetries)
        #expect(unchecked.signature == .absent && unchecked.signatureFile == nil)
        #expect(server.log.last?.path == "/signatures/\(sha256Hex(bytes)).sig")
    }

    @Test func withoutATrustedKeyTheSignatureIsOnlyReported() async throws {
        defer { server.stop() }
        let signed = try await Catalog.fetch(from: server.url("catalog.json"), using: StandardTransport(), trust: .unsigned, retryPolicy: instantRetries)
        #expect(signed.signature == .unchecked)
        #expect(signed.signatureURL == server.url("signatures/\(sha256Hex(bytes)).sig"))
        // A server failing on the signature never fails the fetch, and is asked once, not retried.
        let signaturePath = "signatures/\(sha256Hex(bytes)).sig"
        for fault in [FaultHTTPServer.Fault.status(503), .status(500), .dropAfter(bytes: 10), .htmlInsteadOfFile] {
            server.plan(signaturePath, [fault])
            let fetched = try await Catalog.fetch(from: server.url("catalog.json"), using: StandardTransport(), trust: .unsigned, retryPolicy: instantRetries)
            #expect(fetched.bytes == bytes)
            // An HTML page for every missing path (a single-page-app host) is no signature either.
            #expect(fetched.signature == .absent && fetched.signatureFile == nil, "\(fault)")
        }
        #expect(server.log(for: signaturePath).count == 5)
        // An invalid catalog is refused before its signature is looked for.
        server.always("catalog.json", .htmlInsteadOfFile)
        await #expect(throws: CatalogError.self) {
            try await Catalog.fetch(from: server.url("catalog.json"), using: StandardTransport(), trust: .unsigned, retryPolicy: instantRetries)
        }
        #expect(server.log(for: signaturePath).count == 5)
    }

    @Test func anHTMLErrorPageIsAnInvalidCatalog() async throws {
        defer { server.stop() }
        server.always("catalog.json", .htmlInsteadOfFile)
        do {
            _ = try await Catalog.fetch(from: server.url("catalog.json"), using: StandardTransport(), trust: .unsigned, retryPolicy: instantRetries)
            Issue.record("an HTML page must be refused")
        } catch let error as CatalogError {
            #expect(error.diagnostic.code == .invalidCatalog)
            #expect(error.reason.contains("HTML"))
        }
        // With a trusted key too: the shape is checked before the signature is looked for, so
        // the page is reported as what it is, not as a missing signature.
        await #expect(throws: CatalogError.self) {
            try await Catalog.fetch(from: server.url("catalog.json"), using: StandardTransport(),
                                    trust: .signed(by: key.publicKey), retryPolicy: instantRetries)
        }
        #expect(!server.log.contains { $0.path.hasPrefix("/signatures/") })
    }

    @Test func aLocalFolderWorksLikeAServer() async throws {
        defer { server.stop() }
        let url = try CatalogLocation.url(for: folder.path("site"))
        let fetched = try await Catalog.fetch(from: url, using: StandardTransport(), trust: .signed(by: key.publicKey))
        #expect(fetched.bytes == bytes)
        #expect(fetched.signatureURL.path == folder.path("site/signatures/\(sha256Hex(bytes)).sig"))
        let entry = try #require(fetched.catalog.products.first?.versions.first)
        #expect(entry.resolvedURL(relativeTo: fetched.url)?.path == folder.path("site/com.example.book/1.0.pkg"))
    }
}
