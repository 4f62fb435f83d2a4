import PkgKitDiagnostics

/// Why a catalog was refused as a whole: it is not valid JSON of the catalog's shape
/// (`invalid-catalog`, a refusal).
public struct CatalogError: DiagnosableError, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong, in words for a diagnostic (where, and what was expected).
    public var reason: String
    /// The catalog concerned, as its diagnostic names it: `catalog.json` unless whoever read it
    /// knows better (its URL, or its path in a published folder).
    public var path: String

    /// An error with this reason, about `path`.
    public init(_ reason: String, path: String = Catalog.fileName) {
        self.reason = reason
        self.path = path
    }

    /// The `invalid-catalog` diagnostic for this error, naming the catalog once.
    public var diagnostic: Diagnostic {
        Diagnostic(.invalidCatalog, path: path, "refused as a whole: \(reason)")
    }

    /// A catalog that is not one needs a person: `refused`.
    public var disposition: ErrorDisposition { .refused }

    /// `path: reason`.
    public var description: String { "\(path): \(reason)" }
}
