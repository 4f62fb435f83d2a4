import Foundation
import PkgKitSupport
import PkgKitFormat
import PkgKitCatalog
import PkgKitTransport
import PkgKitDiagnostics

/// A catalog's body as it arrives: decoded as it comes when the server compressed it (gzip),
/// refused as soon as the decoded bytes pass `Catalog.maximumBytes`, so that a small compressed
/// body that inflates without end (a gzip bomb) costs neither time nor memory past the bound.
final class CatalogBody: @unchecked Sendable {
    // @unchecked: the transfer hands chunks over one at a time (`HTTPTransport.get` awaits each
    // `onBody` before reading the next), and the value is read once the transfer is over.
    private let url: String
    private var decoded = Data()
    private var inflater: Inflater?
    private var ended = false

    /// A body for the catalog at `url` (as diagnostics name it).
    init(url: String) {
        self.url = url
    }

    /// Prepares for the body `head` announces: as stored, or gzip. Any other encoding (one the
    /// request did not accept) is refused.
    func start(_ head: HTTPResponseHead) throws(CatalogError) {
        decoded = Data()
        ended = false
        switch head.contentEncoding {
        case nil:
            inflater = nil
            if let length = head.contentLength { decoded.reserveCapacity(Int(min(length, Int64(Catalog.maximumBytes)))) }
        case "gzip", "x-gzip": inflater = Inflater(gzip: true)
        case let other?:
            throw refusal("the server sent it compressed as '\(PathDisplay.printable(other))', which was not asked for (only gzip is accepted)")
        }
    }

    /// Takes the next chunk received.
    func append(_ chunk: Data) throws(CatalogError) {
        guard let inflater else {
            guard chunk.count <= Catalog.maximumBytes - decoded.count else { throw overLimit() }
            decoded.append(chunk)
            return
        }
        guard !ended else { throw refusal("bytes follow the end of its gzip stream") }
        var output = [UInt8](repeating: 0, count: 64 << 10)
        let failure: CatalogError? = chunk.withUnsafeBytes { input in
            inflater.supply(input)
            return output.withUnsafeMutableBytes { buffer -> CatalogError? in
                while true {
                    let (count, status) = inflater.inflate(into: buffer)
                    guard count <= Catalog.maximumBytes - decoded.count else { return overLimit() }
                    decoded.append(contentsOf: buffer.prefix(count))
                    switch status {
                    case .more: continue
                    case .needsInput: return nil
                    case .ended:
                        ended = true
                        return inflater.pendingInput > 0 ? refusal("bytes follow the end of its gzip stream") : nil
                    case .corrupt(let words): return refusal("its gzip encoding is damaged (\(words))")
                    }
                }
            }
        }
        if let failure { throw failure }
    }

    /// The catalog's bytes, once the transfer is over; a gzip stream must have ended.
    func finish() throws(CatalogError) -> Data {
        if inflater != nil && !ended { throw refusal("its gzip encoding ends early") }
        return decoded
    }

    /// The refusal of a catalog past its bound, said as the bytes came (stored or compressed).
    private func overLimit() -> CatalogError {
        refusal(inflater == nil ? "it is over the \(Catalog.maximumBytes)-byte limit"
                                : "it decodes to more than the \(Catalog.maximumBytes)-byte limit")
    }

    /// An `invalid-catalog` error about this catalog.
    private func refusal(_ reason: String) -> CatalogError { CatalogError(reason, path: url) }
}
