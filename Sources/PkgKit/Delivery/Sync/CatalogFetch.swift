import Foundation

/// A catalog as fetched: its value, its exact bytes and where it came from.
public struct FetchedCatalog: Sendable, Equatable {
    /// The parsed catalog.
    public var catalog: Catalog
    /// The exact bytes served (what the signature covers).
    public var bytes: Data
    /// The catalog's URL, against which version URLs resolve.
    public var url: URL
    /// True when its signature was checked with a trusted key.
    public var verified: Bool
}

extension Catalog {
    /// Fetches the catalog at `url` (at most `Catalog.maximumBytes`), and with a `trustedKey`
    /// its signature at `url` + `.sig`, which is checked against the exact bytes before they
    /// are parsed. Transient failures are retried with `retryPolicy`.
    ///
    /// Throws `SignatureError` (`bad-signature`: missing or wrong signature), `CatalogError`
    /// (`invalid-catalog`: not the catalog's shape, or too large), `TransportError` (the server
    /// could not be read), `CancellationError`.
    public static func fetch(from url: URL, using transport: any HTTPTransport, trustedKey: CatalogVerifyingKey? = nil,
                             retryPolicy: RetryPolicy = RetryPolicy(),
                             transferPolicy: TransferPolicy = TransferPolicy()) async throws -> FetchedCatalog {
        let bytes: Data
        do {
            bytes = try await retryPolicy.run(clock: transferPolicy.clock) { _, _ in
                try await transport.fetchData(url, maximumBytes: Int64(Catalog.maximumBytes), policy: transferPolicy)
            }
        } catch TransportError.bodyTooLong {
            throw CatalogError("it is over the \(Catalog.maximumBytes)-byte limit")
        }
        if let trustedKey {
            var signature: Data?
            do {
                signature = try await retryPolicy.run(clock: transferPolicy.clock) { _, _ in
                    try await transport.fetchData(signatureURL(for: url), maximumBytes: 4096, policy: transferPolicy)
                }
            } catch let error as TransportError {
                // Only "not there" means missing; anything else is a failure to read the server.
                guard case .status(let code, _) = error, code == 404 || code == 410 else { throw error }
            }
            try trustedKey.verify(catalog: bytes, signatureFile: signature)
        }
        return FetchedCatalog(catalog: try Catalog(data: bytes), bytes: bytes, url: url, verified: trustedKey != nil)
    }
}
