/// Why a catalog was refused as a whole: it is not valid JSON of the catalog's shape.
public struct CatalogError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong, in words for a diagnostic (where, and what was expected).
    public var reason: String

    /// An error with this reason.
    public init(_ reason: String) {
        self.reason = reason
    }

    /// The `invalid-catalog` diagnostic for this error.
    public var diagnostic: Diagnostic {
        Diagnostic(.invalidCatalog, path: nil, "\(Catalog.fileName) is refused as a whole: \(reason)")
    }

    /// The reason.
    public var description: String { reason }
}
