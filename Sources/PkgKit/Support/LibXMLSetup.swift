internal import CXML2

/// libxml2 must be initialised once before threads use it: its lazy initialisation is not
/// thread-safe, and pkgtool parses XML (TOCs, plists) from several threads, as does libarchive's
/// xar reader. A Swift `static let` runs its initialiser exactly once, safely.
package enum LibXMLSetup {
    private static let initialized: Void = { xmlInitParser() }()

    /// Call before any libxml2 use, directly or through libarchive.
    package static func ensure() { _ = initialized }
}
