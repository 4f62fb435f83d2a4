import Foundation
import PkgKitSupport
import PkgKitDiagnostics
import PkgKitIdentity
import PkgKitFormat
import PkgKitCatalog

/// What one product's sync will do, decided before anything is downloaded: a pure value computed
/// from the catalog entry, the installed record, a download left by an earlier run, and what is
/// known of the server (`SyncSituation`). `SyncExecutor` carries it out, or for `sync --check`
/// goes as far as the package's body and reports what it would fetch. Sparkle keeps the same split between deciding (the appcast), downloading and installing.
public enum SyncPlan: Sendable, Equatable {
    /// Nothing to download: the installed version is the catalog's `latest`, or newer than it
    /// (sync never downgrades).
    case unchanged(installed: String, latest: String)
    /// The catalog does not list the product, which is installed from elsewhere: an update run
    /// leaves it as it is.
    case notListed(installed: String?)
    /// Refused before anything is downloaded (unknown product, an entry over the size limit, an
    /// unusable URL).
    case refused(Diagnostic)
    /// The catalog's latest version is to be downloaded and installed.
    case update(Update)

    /// A version to fetch and install, and how.
    public struct Update: Sendable, Equatable {
        /// The catalog's entry for it.
        public var entry: CatalogVersion
        /// The package's absolute URL.
        public var url: URL
        /// The version installed now, if any.
        public var previousVersion: String?
        /// How the bytes are fetched.
        public var method: Method
    }

    /// How a package's bytes are fetched.
    public enum Method: Sendable, Equatable {
        /// Header and TOC by Range, every unchanged file taken from the installed version folder
        /// named here, only the changed files' ranges downloaded.
        case delta(from: String)
        /// The whole package, continuing a download an earlier run left at `resumingFrom` bytes
        /// (0: from the start); `reason` says why not a delta when one could have been.
        case full(resumingFrom: Int64, reason: FullDownloadReason?)
    }

    /// Why a package is downloaded whole although a version is installed.
    public enum FullDownloadReason: String, Sendable, Codable {
        /// The caller turned deltas off (`SyncClient.Options.delta`).
        case noDelta = "deltas turned off"
        /// The server answered a Range request with the whole file.
        case serverIgnoresRange = "server ignores Range"
        /// An earlier run's download of this very entry is continued.
        case resuming = "resuming a download"
        /// A zip, or a package whose catalog entry anchors no table of contents.
        case noTableOfContents = "no table of contents to compare"
        /// The package is too small for a delta to pay.
        case small = "small package"
        /// A changed file has no checksum in the table of contents: only the catalog's sha256 of
        /// the whole package vouches for its bytes.
        case unverifiedFile = "a changed file has no checksum"
        /// The changed files lie in more places than a delta fetches with separate requests.
        case tooManyRanges = "too many changed ranges"
    }

    /// The catalog's latest version, when the catalog lists the product (or the installed one
    /// for a product it does not list).
    public var contentVersion: String? {
        switch self {
        case .unchanged(_, let latest): return latest
        case .notListed(let installed): return installed
        case .refused: return nil
        case .update(let update): return update.entry.contentVersion.description
        }
    }
}

/// Everything the plan depends on, gathered before deciding.
public struct SyncSituation: Sendable {
    /// The product.
    public var productIdentifier: String
    /// True when it was named (`--product`), false in an update run of installed products.
    public var requested: Bool
    /// The catalog's entry for the product, nil when it lists none.
    public var product: CatalogProduct?
    /// Every product identifier the catalog lists, for naming the near misses of one it does not.
    public var catalogProducts: [String]
    /// The catalog's URL, against which version URLs resolve.
    public var catalogURL: URL
    /// The version the product's record names, nil when none is installed.
    public var installedVersion: String?
    /// The version folder on disk for the installed version (its name may spell the version
    /// differently: `1.0.0` for `1.0`), nil when it is missing.
    public var installedFolder: String?
    /// Bytes already downloaded by an earlier run for the catalog's latest entry (its `.part`
    /// noted with the same size and sha256), 0 when none.
    public var partialBytes: Int64
    /// Whether the server honours Range requests: nil until a request has shown it.
    public var serverHonoursRange: Bool?
    /// False for `--no-delta`.
    public var deltaAllowed: Bool
    /// The size limit (`--max-size`).
    public var limits: PackageLimits

    /// A situation with these facts.
    public init(productIdentifier: String, requested: Bool, product: CatalogProduct?, catalogURL: URL,
                installedVersion: String?, installedFolder: String?, partialBytes: Int64 = 0,
                serverHonoursRange: Bool? = nil, deltaAllowed: Bool = true, limits: PackageLimits = PackageLimits(),
                catalogProducts: [String] = []) {
        self.productIdentifier = productIdentifier
        self.requested = requested
        self.product = product
        self.catalogProducts = catalogProducts
        self.catalogURL = catalogURL
        self.installedVersion = installedVersion
        self.installedFolder = installedFolder
        self.partialBytes = partialBytes
        self.serverHonoursRange = serverHonoursRange
        self.deltaAllowed = deltaAllowed
        self.limits = limits
    }
}

extension SyncPlan {
    /// A delta costs two requests before the first changed byte; below this size the whole
    /// package is fetched instead.
    public static let smallestDeltaPackage: Int64 = 128 << 10

    /// How many of the catalog's products an `unknown-product` refusal names.
    static let productsNamed = 10

    /// Why `id` is refused, naming what the catalog does list: up to `productsNamed` products,
    /// the nearest spelling first, so that a typo shows its correction and a wrong catalog shows
    /// what it holds.
    static func unknownProductMessage(_ id: String, listed: [String]) -> String {
        guard !listed.isEmpty else { return "the catalog lists no product \(id), nor any other: publish it first, or check the catalog's address" }
        let nearest = NearestName.ranked(for: id, among: listed, limit: productsNamed)
        let more = listed.count - nearest.count
        return "the catalog lists no product \(id); it lists \(nearest.joined(separator: ", "))"
            + (more > 0 ? " and \(more) more" : "") + ": check the identifier, or publish it first"
    }

    /// The plan for `situation` (the rules of docs/sync.md, in order).
    public static func make(_ situation: SyncSituation) -> SyncPlan {
        let id = situation.productIdentifier
        guard let product = situation.product else {
            guard situation.requested else { return .notListed(installed: situation.installedVersion) }
            return .refused(Diagnostic(.unknownProduct, path: nil, unknownProductMessage(id, listed: situation.catalogProducts)))
        }
        guard let entry = product.latestVersion, let url = entry.resolvedURL(relativeTo: situation.catalogURL) else {
            return .refused(Diagnostic(.invalidCatalog, path: Catalog.fileName, "\(id)'s latest version has no usable URL"))
        }
        if let installed = situation.installedVersion, situation.installedFolder != nil,
           let version = ContentVersion(installed), version >= entry.contentVersion {
            return .unchanged(installed: installed, latest: entry.contentVersion.description)
        }
        let limit = situation.limits.maxSize
        for (what, bytes) in [("package", entry.size), ("payload", entry.payloadBytes)] where bytes > limit {
            return .refused(Diagnostic(.sizeLimit, path: nil,
                words: "\(id) \(entry.contentVersion)'s \(what) is \(bytes) bytes, over the limit of \(limit): nothing was downloaded (\(hint: .raiseSizeLimit) to accept it)"))
        }
        let update = { (method: Method) in
            SyncPlan.update(Update(entry: entry, url: url, previousVersion: situation.installedVersion, method: method))
        }
        let resume = min(max(situation.partialBytes, 0), entry.size)
        guard let folder = situation.installedFolder, situation.installedVersion != nil else {
            return update(.full(resumingFrom: resume, reason: nil))
        }
        if !situation.deltaAllowed { return update(.full(resumingFrom: resume, reason: .noDelta)) }
        if resume > 0 { return update(.full(resumingFrom: resume, reason: .resuming)) }
        if entry.tocSHA256 == nil { return update(.full(resumingFrom: 0, reason: .noTableOfContents)) }
        if situation.serverHonoursRange == false { return update(.full(resumingFrom: 0, reason: .serverIgnoresRange)) }
        if entry.size < smallestDeltaPackage { return update(.full(resumingFrom: 0, reason: .small)) }
        return update(.delta(from: folder))
    }
}
