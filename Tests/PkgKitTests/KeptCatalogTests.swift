import Foundation
import Testing
@testable import PkgKit
@testable import PkgKitSync
import TestSupport

/// A check that costs almost nothing when nothing changed: the last verified catalog is kept in
/// the Documents folder with its validators, asked about with `If-None-Match`, and reused on a
/// 304, verified again; the catalog travels gzip-compressed and is decoded within its bound.
/// Against nginx configured as docs/publishing.md shows (`etag on`, `gzip` for JSON).
@Suite(.timeLimit(.minutes(2))) struct KeptCatalogTests {
    let scratch: Scratch
    let key = CatalogSigningKey()
    let bytes: Data

    init() throws {
        scratch = try Scratch()
        bytes = Self.catalog(products: 500, version: "1.0")
        try publish(bytes)
        try FileManager.default.createDirectory(atPath: scratch.documents, withIntermediateDirectories: true)
    }

    /// A catalog of `products` products, each with one version.
    static func catalog(products: Int, version: String) -> Data {
        let products = (0..<products).map { index in
            let entry = CatalogVersion(contentVersion: ContentVersion(version)!, url: "com.example.p\(index)/\(version).pkg",
                                       size: 1000 + Int64(index), sha256: sha256Hex(Data("\(index)".utf8)), tocSHA256: nil,
                                       fileCount: 1, payloadBytes: 10)
            return CatalogProduct(productIdentifier: "com.example.p\(index)", latest: entry.contentVersion, versions: [entry])
        }
        return Catalog(products: products.sorted { $0.productIdentifier < $1.productIdentifier }).encoded()
    }

    /// Puts `catalog` and its signature where nginx serves them.
    func publish(_ catalog: Data) throws {
        try scratch.write("site/" + CatalogSignature.relativePath(for: catalog), key.signatureFile(for: catalog))
        try scratch.write("site/catalog.json", catalog)
    }

    /// nginx with ETags and on-the-fly gzip for JSON, as docs/publishing.md configures it.
    func nginx() throws -> NginxServer {
        let root = scratch.path("site")
        return try NginxServer(root: root) { port in
            """
            server {
                    listen 127.0.0.1:\(port);
                    root \(root);
                    etag on;
                    gzip on;
                    gzip_types application/json;
                    location / { }
                }
            """
        }
    }

    func sync(_ url: URL, trust: CatalogTrust? = nil, transport: any HTTPTransport = StandardTransport()) async throws -> SyncReport {
        let client = SyncClient(catalogURL: url, documents: scratch.documents, transport: transport)
        return try await client.sync(SyncClient.Options(trust: trust ?? .signed(by: key.publicKey), retryPolicy: instantRetries))
    }


    @Test func anUpToDateSyncIsOne304AndNoSignature() async throws {
        let server = try nginx()
        defer { server.stop() }
        let url = server.url("catalog.json")
        let first = try await sync(url)
        #expect(first.signature == .verified && first.outcome == .success, "\(first.diagnostics)")
        let fetched = server.log(atLeast: 2)
        let catalogSent = try #require(fetched.first { $0.path == "/catalog.json" })
        // Compressed on the wire, and counted as it came.
        #expect(catalogSent.status == 200 && catalogSent.bodyBytesSent < bytes.count / 4, "\(catalogSent) of \(bytes.count)")
        // nginx counts the chunked encoding's framing too: a few bytes per chunk.
        let sent = Int64(fetched.reduce(0) { $0 + $1.bodyBytesSent })
        #expect(first.bytesDownloaded <= sent && sent - first.bytesDownloaded < 100, "\(first.bytesDownloaded) of \(fetched)")
        #expect(KeptCatalog.read(documents: scratch.documents, catalogURL: url)?.bytes == bytes)

        let second = try await sync(url)
        #expect(second.signature == .verified && second.outcome == .success)
        let asked = Array(server.log(atLeast: fetched.count + 1).dropFirst(fetched.count))
        #expect(asked.map(\.path) == ["/catalog.json"] && asked.map(\.status) == [304], "\(asked)")
        #expect(second.bytesDownloaded == 0)

        // A check asks the same way, and writes nothing.
        let before = snapshot(scratch.documents)
        let check = try await SyncClient(catalogURL: url, documents: scratch.documents)
            .check(SyncClient.Options(trust: .signed(by: key.publicKey), retryPolicy: instantRetries))
        #expect(check.signature == .verified && check.bytesDownloaded == 0)
        #expect(server.log(atLeast: fetched.count + 2).last?.status == 304)
        #expect(differences(scratch.documents, expected: before).isEmpty)
    }

    @Test func aChangedCatalogIsFetchedAndKept() async throws {
        let server = try nginx()
        defer { server.stop() }
        let url = server.url("catalog.json")
        _ = try await sync(url)
        let changed = Self.catalog(products: 500, version: "1.1")
        try publish(changed)
        // nginx's ETag is the file's modification time in seconds and its size, which a catalog
        // published again within the same second at the same size would share.
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(5)], ofItemAtPath: scratch.path("site/catalog.json"))
        let count = server.log(atLeast: 2).count
        let report = try await sync(url)
        #expect(report.signature == .verified)
        let asked = Array(server.log(atLeast: count + 2).dropFirst(count))
        #expect(asked.map(\.status) == [200, 200], "\(asked)")
        let sent = Int64(asked.reduce(0) { $0 + $1.bodyBytesSent })
        #expect(report.bytesDownloaded <= sent && sent - report.bytesDownloaded < 100)
        #expect(KeptCatalog.read(documents: scratch.documents, catalogURL: url)?.bytes == changed)
    }

    @Test func aDamagedKeptCatalogIsIgnoredAndFetchedAfresh() async throws {
        let server = try nginx()
        defer { server.stop() }
        let url = server.url("catalog.json")
        _ = try await sync(url)
        let path = KeptCatalog.path(documents: scratch.documents, catalogURL: url)
        var kept = try Data(contentsOf: URL(fileURLWithPath: path))
        kept[kept.count - 10] ^= 0xFF
        try kept.write(to: URL(fileURLWithPath: path))
        #expect(KeptCatalog.read(documents: scratch.documents, catalogURL: url) == nil)
        let count = server.log(atLeast: 2).count
        let report = try await sync(url)
        #expect(report.signature == .verified && report.outcome == .success)
        #expect(Array(server.log(atLeast: count + 2).dropFirst(count)).map(\.status) == [200, 200])
        #expect(KeptCatalog.read(documents: scratch.documents, catalogURL: url)?.bytes == bytes)
    }

    @Test func keptBytesAreVerifiedWithThisRunsKeys() async throws {
        let server = try nginx()
        defer { server.stop() }
        let url = server.url("catalog.json")
        _ = try await sync(url)
        let stranger = try await sync(url, trust: .signed(by: CatalogSigningKey().publicKey))
        #expect(stranger.outcome == .refused && stranger.diagnostics.map(\.code) == [.badSignature], "\(stranger.diagnostics)")
        // An unsigned run takes the kept bytes too, and reports the signature as unchecked.
        let unsigned = try await sync(url, trust: .unsigned)
        #expect(unsigned.signature == .unchecked && unsigned.bytesDownloaded == 0)
    }

    @Test func aServerWithoutValidatorsGetsAFullFetchEachTime() async throws {
        let (bytes, key) = (bytes, key)
        let transport = ScriptedTransport { request in
            request.url.lastPathComponent == "catalog.json" ? .serving(bytes, for: request) : .serving(key.signatureFile(for: bytes), for: request)
        }
        let url = URL(string: "https://cdn.example.com/catalog.json")!
        for _ in 0..<2 {
            let report = try await sync(url, transport: transport)
            #expect(report.signature == .verified)
        }
        #expect(transport.exchanges.map(\.request.validators) == [nil, nil, nil, nil])
        #expect(transport.exchanges.allSatisfy { $0.status == 200 })
        #expect(!exists(scratch.documents + "/" + KeptCatalog.folderName))
    }

    @Test func aServerThatIgnoresValidatorsStillWorks() async throws {
        let (bytes, key) = (bytes, key)
        // It sends an ETag, but answers every request in full, conditional or not.
        let transport = ScriptedTransport { request in
            guard request.url.lastPathComponent == "catalog.json" else { return .serving(key.signatureFile(for: bytes), for: request) }
            return ScriptedTransport.Reply(head: HTTPResponseHead(statusCode: 200, contentLength: Int64(bytes.count),
                                                                  validators: HTTPValidators(etag: "\"v1\"", lastModified: nil)),
                                           steps: [.bytes(bytes)])
        }
        let url = URL(string: "https://cdn.example.com/catalog.json")!
        for _ in 0..<2 {
            let report = try await sync(url, transport: transport)
            #expect(report.signature == .verified && report.outcome == .success)
        }
        let catalogRequests = transport.exchanges(for: "catalog.json")
        #expect(catalogRequests.map(\.request.validators?.etag) == [nil, "\"v1\""])
        #expect(catalogRequests.allSatisfy { $0.status == 200 && $0.completed })
        #expect(KeptCatalog.read(documents: scratch.documents, catalogURL: url)?.bytes == bytes)
    }

    @Test func aGzipBombIsAnInvalidCatalogCutOffAtTheBound() async throws {
        let bomb = Gzip.bomb(decodedBytes: 256 << 20)
        let transport = ScriptedTransport { _ in
            ScriptedTransport.Reply(head: HTTPResponseHead(statusCode: 200, contentLength: nil, contentEncoding: "gzip"), steps: [.bytes(bomb)])
        }
        do {
            _ = try await Catalog.fetch(from: URL(string: "https://cdn.example.com/catalog.json")!, using: transport,
                                        trust: .signed(by: key.publicKey), retryPolicy: instantRetries)
            Issue.record("a gzip bomb must be refused")
        } catch let error as CatalogError {
            #expect(error.diagnostic.code == .invalidCatalog)
            #expect(error.reason.contains("decodes to more than"), "\(error.reason)")
        }
        // Refused as soon as the decoded bytes passed the bound: the rest was never read.
        let exchange = try #require(transport.exchanges.first)
        #expect(transport.exchanges.count == 1 && exchange.cancelled && exchange.bytesSent < Int64(bomb.count), "\(exchange)")
    }

    @Test func aCompressedCatalogDecodesToItsExactBytes() async throws {
        let (bytes, key) = (bytes, key)
        let transport = ScriptedTransport { request in
            guard request.url.lastPathComponent == "catalog.json" else { return .serving(key.signatureFile(for: bytes), for: request) }
            #expect(request.acceptsGzip)
            let body = Gzip.compress(bytes)
            return ScriptedTransport.Reply(head: HTTPResponseHead(statusCode: 200, contentLength: Int64(body.count), contentEncoding: "gzip"),
                                           steps: [.bytes(body)])
        }
        let fetched = try await Catalog.fetch(from: URL(string: "https://cdn.example.com/catalog.json")!, using: transport,
                                              trust: .signed(by: key.publicKey), retryPolicy: instantRetries)
        #expect(fetched.bytes == bytes && fetched.verified)
        #expect(fetched.bytesDownloaded == transport.exchanges.reduce(0) { $0 + $1.bytesSent })
        #expect(fetched.bytesDownloaded < Int64(bytes.count / 4))
        // A damaged stream, or one cut short, is no catalog.
        for body in [Gzip.compress(bytes).dropLast(100), Data([0x1F, 0x8B, 0x08, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF])] {
            let broken = ScriptedTransport { _ in
                ScriptedTransport.Reply(head: HTTPResponseHead(statusCode: 200, contentLength: nil, contentEncoding: "gzip"), steps: [.bytes(Data(body))])
            }
            await #expect(throws: CatalogError.self) {
                try await Catalog.fetch(from: URL(string: "https://cdn.example.com/catalog.json")!, using: broken,
                                        trust: .unsigned, retryPolicy: instantRetries)
            }
        }
    }
}
