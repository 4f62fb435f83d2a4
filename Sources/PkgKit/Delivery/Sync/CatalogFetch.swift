import Foundation
import PkgKitCatalog
import PkgKitTransport
import PkgKitDiagnostics

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
    /// The signature file as received; nil when none was (without a trusted key, also when what
    /// came holds no signature).
    public var signatureFile: Data?

    /// True when the signature was checked with a trusted key.
    public var verified: Bool { signature == .verified }

    /// Body bytes received: the catalog's and its signature file's.
    public var bytesDownloaded: Int64 { Int64(bytes.count + (signatureFile?.count ?? 0)) }
}

extension Catalog {
    /// Fetches the catalog at `url` (at most `Catalog.maximumBytes`), then the signature of
    /// exactly the bytes received, `signatures/<sha256>.sig` relative to `url`. Transient failures
    /// are retried with `retryPolicy`.
    ///
    /// With `trustedKeys`, the bytes are accepted only when a line of that file verifies with
    /// one of the keys, and checked before they are parsed; a missing file (HTTP 404 or 410) is
    /// `bad-signature`. Without, the file is looked for once, without retries, only to report
    /// `unchecked` or `absent`: failing to fetch it never fails the fetch.
    ///
    /// Throws `SignatureError` (`bad-signature`: missing or wrong signature), `CatalogError`
    /// (`invalid-catalog`: not the catalog's shape, or too large), `TransportError` (the server
    /// could not be read), `CancellationError`.
    public static func fetch(from url: URL, using transport: any HTTPTransport, trustedKeys: [CatalogVerifyingKey] = [],
                             retryPolicy: RetryPolicy = RetryPolicy(),
                             transferPolicy: TransferPolicy = TransferPolicy()) async throws -> FetchedCatalog {
        let bytes: Data
        do {
            bytes = try await retryPolicy.run(clock: transferPolicy.clock) { _, _ in
                try await transport.fetchData(url, maximumBytes: Int64(Catalog.maximumBytes), policy: transferPolicy)
            }
        } catch TransportError.bodyTooLong {
            throw CatalogError("it is over the \(Catalog.maximumBytes)-byte limit", path: shown(url))
        }
        let signatureURL = CatalogSignature.url(for: bytes, catalogURL: url)
        guard !trustedKeys.isEmpty else {
            let catalog: Catalog
            do {
                catalog = try Catalog(data: bytes)
            } catch {
                throw CatalogError(error.reason, path: shown(url))
            }
            let file = try await lookForSignature(at: signatureURL, using: transport, policy: transferPolicy)
            return FetchedCatalog(catalog: catalog, bytes: bytes, url: url, signature: file == nil ? .absent : .unchecked,
                                  signatureURL: signatureURL, signatureFile: file)
        }
        var file: Data?
        do {
            file = try await retryPolicy.run(clock: transferPolicy.clock) { _, _ in
                try await transport.fetchData(signatureURL, maximumBytes: Int64(CatalogSignature.maximumBytes), policy: transferPolicy)
            }
        } catch let error as TransportError {
            // Only "not there" means missing, and an endless file is no signature; anything else
            // is a failure to read the server, which may pass by itself.
            switch error {
            case .status(let code, _) where code == 404 || code == 410: break
            case .bodyTooLong:
                throw SignatureError("is over \(CatalogSignature.maximumBytes) bytes: not a signature file", path: shown(signatureURL))
            default: throw error
            }
        }
        do {
            try CatalogSignature.verify(bytes, signatureFile: file, trustedKeys: trustedKeys, path: shown(signatureURL))
            return FetchedCatalog(catalog: try Catalog(data: bytes), bytes: bytes, url: url, signature: .verified,
                                  signatureURL: signatureURL, signatureFile: file)
        } catch let error as CatalogError {
            throw CatalogError(error.reason, path: shown(url))
        }
    }

    /// The signature file at `url`, or nil when it cannot be had: without a trusted key it only
    /// informs, so one attempt is made and every failure but cancellation means "none". A body
    /// that holds no signature (the HTML page some servers give every missing path) is none too.
    private static func lookForSignature(at url: URL, using transport: any HTTPTransport, policy: TransferPolicy) async throws -> Data? {
        do {
            let file = try await transport.fetchData(url, maximumBytes: Int64(CatalogSignature.maximumBytes), policy: policy)
            return (try? CatalogSignature.signatures(fromFile: file, path: url.absoluteString)) == nil ? nil : file
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            try Task.checkCancellation()
            return nil
        }
    }

    /// A URL as a diagnostic names it: a local file by its path, anything else in full.
    private static func shown(_ url: URL) -> String {
        url.isFileURL ? url.path : url.absoluteString
    }
}
