import PkgKitDiagnostics

/// Why a xar's table of contents could not be read.
public enum XarTOCError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The package's bytes could not be read: the system's words (errno's text), or the source's.
    case unreadable(String)
    /// The bytes are no table of contents pkgtool reads: a header not in the standard layout, a
    /// zlib stream damaged or cut short, or XML that is not well formed (libxml2's words).
    case malformed(String)
    /// The table of contents declares more than pkgtool reads from any package.
    case limitPassed(Limit)

    /// The bounds a table of contents is held to, whatever it declares.
    public enum Limit: Sendable, Equatable, CustomStringConvertible {
        /// The XML's bytes once inflated (`XarTableOfContents.maxTOCBytes`).
        case xmlBytes
        /// `<file>` elements (`XarTableOfContents.maxEntries`).
        case entries
        /// Elements nested in one another (`XarTableOfContents.maxDepth`).
        case depth
        /// The header declares a TOC longer than `XarTableOfContents.maxTOCBytes` (this many bytes).
        case declaredLength(UInt64)

        /// The limit in words.
        public var description: String {
            switch self {
            case .xmlBytes: "it inflates to more than \(XarTableOfContents.maxTOCBytes >> 20) MiB of XML"
            case .entries: "it lists more than \(XarTableOfContents.maxEntries) files"
            case .depth: "its elements nest more than \(XarTableOfContents.maxDepth) deep"
            case .declaredLength(let length): "its header declares \(length) bytes, more than \(XarTableOfContents.maxTOCBytes >> 20) MiB"
            }
        }
    }

    /// What a package's source threw, in words.
    package init(sourceFailure error: any Error) {
        self = .unreadable((error as? ReadError)?.message ?? String(describing: error))
    }

    /// The failure in one line.
    public var description: String {
        switch self {
        case .unreadable(let reason): "the package cannot be read: \(reason)"
        case .malformed(let reason): reason
        case .limitPassed(let limit): "the table of contents is refused: \(limit)"
        }
    }
}

extension XarTOCError: DiagnosableError {
    /// `unreadable-input` when the bytes could not be read, else `unreadable-archive`.
    public var diagnostic: Diagnostic {
        switch self {
        case .unreadable: Diagnostic(.unreadableInput, path: nil, description)
        case .malformed, .limitPassed: Diagnostic(.unreadableArchive, path: nil, description)
        }
    }

    /// A failure when the bytes could not be read; a refusal when they are no table of contents.
    public var disposition: ErrorDisposition {
        if case .unreadable = self { return .failed }
        return .refused
    }
}
