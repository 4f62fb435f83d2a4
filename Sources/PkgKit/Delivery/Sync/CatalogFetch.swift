import Foundation
import PkgKitCatalog
import PkgKitTransport
import PkgKitDiagnostics
import PkgKitSupport

/// A catalog as fetched: its value, its exact bytes, where it came from, and what is known of
/// its signature.
public struct FetchedCatalog: Sendable, Equatable {
    /// The parsed catalog.
    public var catalog: Catalog
    /// The exact bytes served (what the signature covers).
    public var bytes: Data
    /// The catalog's URL, against which version URLs resolve.
    public var url: URL
    /// `verified` when trusted keys were given (a catalog that does not verify is never
    /// returned); without them `unchecked` when a signature file exists for these bytes, else
    /// `absent`.
    public var signature: CatalogSignatureStatus
    /// Where the signature of exactly these bytes is looked for: `signatures/<sha256>.sig`
    /// resolved against `url`.
    public var signatureURL: URL
    /// The signature file as received (or kept with the bytes it verified); nil when none was
    /// (without a trusted key, also when what came holds no signature).
    public var signatureFile: Data?

    /// The server's `ETag` and `Last-Modified` for these bytes, when it sent either.
    public var validators: HTTPValidators?
    /// True when the server answered `304 Not Modified` and the bytes are the copy kept by an
    /// earlier run (verified again in this one).
    public var notModified: Bool
    /// Body bytes received on the wire: the catalog's (compressed, when the server compressed
    /// it; nothing on a 304) and its signature file's, retries included.
    public var bytesDownloaded: Int64

    /// True when the signature was checked with a trusted key.
    public var verified: Bool { signature == .verified }
}

extension Catalog {
    /// Fetches the catalog at `url` (at most `Catalog.maximumBytes` once decoded), then the
    /// signature of exactly the bytes received, `signatures/<sha256>.sig` relative to `url`.
    /// Transient failures are retried with `retryPolicy`. The catalog is asked for with
    /// `Accept-Encoding: gzip` and decoded as it arrives.
    ///
    /// The catalog's shape is checked first: what is not a catalog (an HTML error page) is
    /// `invalid-catalog` whatever `trust` says. With trusted keys, the bytes are then accepted only
    /// when a line of their signature file verifies with one of the keys, and nothing is returned
    /// before it does; a missing file (HTTP 404 or 410) is `bad-signature`. With `.unsigned`, the
    /// file is looked for once, without retries, only to report `unchecked` or `absent`: failing to
    /// fetch it never fails the fetch.
    ///
    /// Throws `SignatureError` (`bad-signature`: missing or wrong signature), `CatalogError`
    /// (`invalid-catalog`: not the catalog's shape, too large, or badly compressed),
    /// `TransportError` (the server could not be read), `CancellationError`.
    public static func fetch(from url: URL, using transport: any HTTPTransport, trust: CatalogTrust,
                             retryPolicy: RetryPolicy = RetryPolicy(),
                             transferPolicy: TransferPolicy = TransferPolicy()) async throws -> FetchedCatalog {
        try await fetch(from: url, using: transport, trust: trust, kept: nil, retryPolicy: retryPolicy, transferPolicy: transferPolicy)
    }

    /// `fetch`, asking first whether `kept` is still current: on `304 Not Modified` its bytes are
    /// used, parsed and verified again with `trust` (with the signature file kept with them when
    /// it verifies, else with the one fetched again); a kept copy that no longer parses is dropped
    /// and the catalog fetched afresh.
    static func fetch(from url: URL, using transport: any HTTPTransport, trust: CatalogTrust, kept: KeptCatalog?,
                      retryPolicy: RetryPolicy, transferPolicy: TransferPolicy) async throws -> FetchedCatalog {
        let wire = WireCount()
        let received = try await download(url, validators: kept?.validators, using: transport, wire: wire,
                                          retryPolicy: retryPolicy, transferPolicy: transferPolicy)
        let bytes: Data, notModified: Bool, validators: HTTPValidators?
        switch received {
        case .body(let body, let sent):
            (bytes, notModified, validators) = (body, false, sent)
        case .notModified(let sent):
            guard let kept else { throw TransportError.status(304, url: url.absoluteString) }
            (bytes, notModified, validators) = (kept.bytes, true, sent ?? kept.validators)
        }
        let catalog: Catalog
        do {
            catalog = try Catalog(data: bytes)
        } catch {
            if notModified { return try await fetch(from: url, using: transport, trust: trust, kept: nil,
                                                    retryPolicy: retryPolicy, transferPolicy: transferPolicy) }
            throw CatalogError(error.reason, path: shown(url))
        }
        let signatureURL = CatalogSignature.url(for: bytes, catalogURL: url)
        var fetched = FetchedCatalog(catalog: catalog, bytes: bytes, url: url, signature: .absent, signatureURL: signatureURL,
                                     signatureFile: nil, validators: validators,
                                     notModified: notModified, bytesDownloaded: 0)
        if trust.isUnsigned {
            fetched.signatureFile = notModified ? kept?.signatureFile
                : try await lookForSignature(at: signatureURL, using: transport, wire: wire, policy: transferPolicy)
            fetched.signature = fetched.signatureFile == nil ? .absent : .unchecked
        } else if notModified, let file = kept?.signatureFile,
                  (try? CatalogSignature.verify(bytes, signatureFile: file, trustedKeys: trust.keys, path: shown(signatureURL))) != nil {
            // Bytes verified by an earlier run are verified again with this run's keys; their
            // signature file is not fetched again.
            (fetched.signatureFile, fetched.signature) = (file, .verified)
        } else {
            let file = try await signature(at: signatureURL, using: transport, wire: wire, retryPolicy: retryPolicy, policy: transferPolicy)
            try CatalogSignature.verify(bytes, signatureFile: file, trustedKeys: trust.keys, path: shown(signatureURL))
            (fetched.signatureFile, fetched.signature) = (file, .verified)
        }
        fetched.bytesDownloaded = wire.value
        return fetched
    }

    /// What a catalog request brought: a body, or word that the copy held is current.
    private enum Received {
        /// The catalog's bytes, decoded, and the server's validators for them.
        case body(Data, HTTPValidators?)
        /// `304 Not Modified`, with the validators the server repeated, if any.
        case notModified(HTTPValidators?)
    }

    /// GETs the catalog, conditionally when `validators` are given, accepting gzip.
    private static func download(_ url: URL, validators: HTTPValidators?, using transport: any HTTPTransport, wire: WireCount,
                                 retryPolicy: RetryPolicy, transferPolicy: TransferPolicy) async throws -> Received {
        let request = HTTPRequest(url: url, maximumBodyBytes: Int64(Catalog.maximumBytes), validators: validators, acceptsGzip: true)
        do {
            return try await retryPolicy.run(clock: transferPolicy.clock) { _, _ in
                let body = CatalogBody(url: shown(url))
                let head = try await transport.get(request, policy: transferPolicy, onResponse: { try body.start($0) },
                                                   onBody: { chunk in
                                                       wire.add(chunk.count)
                                                       try body.append(chunk)
                                                   })
                if head.statusCode == 304 { return .notModified(head.validators) }
                return .body(try body.finish(), head.validators)
            }
        } catch TransportError.bodyTooLong {
            throw CatalogError("it is over the \(Catalog.maximumBytes)-byte limit", path: shown(url))
        }
    }

    /// The signature file at `url` for a trusted run: retried like the catalog; nil when the
    /// server says it is not there.
    private static func signature(at url: URL, using transport: any HTTPTransport, wire: WireCount, retryPolicy: RetryPolicy,
                                  policy: TransferPolicy) async throws -> Data? {
        do {
            return try await retryPolicy.run(clock: policy.clock) { _, _ in
                try await fetchSmall(url, using: transport, wire: wire, policy: policy)
            }
        } catch let error as TransportError {
            // Only "not there" means missing, and an endless file is no signature; anything else
            // is a failure to read the server, which may pass by itself.
            switch error {
            case .status(let code, _) where code == 404 || code == 410: return nil
            case .bodyTooLong:
                throw SignatureError("is over \(CatalogSignature.maximumBytes) bytes: not a signature file", path: shown(url))
            default: throw error
            }
        }
    }

    /// The signature file at `url`, or nil when it cannot be had: without a trusted key it only
    /// informs, so one attempt is made and every failure but cancellation means "none". A body
    /// that holds no signature (the HTML page some servers give every missing path) is none too.
    private static func lookForSignature(at url: URL, using transport: any HTTPTransport, wire: WireCount,
                                         policy: TransferPolicy) async throws -> Data? {
        do {
            let file = try await fetchSmall(url, using: transport, wire: wire, policy: policy)
            return (try? CatalogSignature.signatures(fromFile: file, path: url.absoluteString)) == nil ? nil : file
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            try Task.checkCancellation()
            return nil
        }
    }

    /// A signature file's bytes, counted as they arrive.
    private static func fetchSmall(_ url: URL, using transport: any HTTPTransport, wire: WireCount,
                                   policy: TransferPolicy) async throws -> Data {
        let counting = CountingTransport(transport)
        defer { wire.add(Int(counting.bytesReceived)) }
        return try await counting.fetchData(url, maximumBytes: Int64(CatalogSignature.maximumBytes), policy: policy)
    }

    /// A URL as a diagnostic names it: a local file by its path, anything else in full.
    private static func shown(_ url: URL) -> String {
        url.isFileURL ? url.path : url.absoluteString
    }
}

/// Body bytes received on the wire by one fetch, across its requests and retries.
private final class WireCount: Sendable {
    private let count = LockedValue(Int64(0))

    /// Counts `bytes` more.
    func add(_ bytes: Int) { count.withLock { $0 += Int64(bytes) } }
    /// The bytes counted so far.
    var value: Int64 { count.current }
}
