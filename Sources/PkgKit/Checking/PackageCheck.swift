import PkgKitSupport
import PkgKitDiagnostics
import PkgKitIdentity
import PkgKitFormat

/// Opens and scans a package or folder in full and runs every rule: the work behind
/// `validate`, and the first step of `extract`, `inspect --files`, `diff` and `--previous`.
public struct PackageCheck: Sendable {
    /// What was checked.
    public var path: String
    /// Everything the scan learnt.
    public var facts: PackageFacts
    /// Every finding.
    public var diagnostics: [Diagnostic]

    package init(path: String, facts: PackageFacts, diagnostics: [Diagnostic]) {
        self.path = path
        self.facts = facts
        self.diagnostics = diagnostics
    }

    /// Scans `path` and judges it. Throws only when the input cannot be read at all (exit 2), or
    /// `OperationCancelled` when `cancellation` is set while reading.
    /// `digests: false` skips computing each file's sha1 when nothing will compare contents.
    /// `depth: .headers` judges everything but the data's integrity (a quick first look); with a
    /// `sink`, every byte read is also handed to it.
    public static func run(_ path: String, context: RuleContext, depth: PackageScanner.Depth = .full, digests: Bool = true,
                           sink: (any EntrySink)? = nil, cancellation: Cancellation? = nil,
                           progress: ((Int64, Int64) -> Void)? = nil) throws -> PackageCheck {
        try run(.file(path), context: context, depth: depth, digests: digests, sink: sink, cancellation: cancellation, progress: progress)
    }

    /// `run` over any source.
    /// `supplied` describes the files whose data `source`'s reader withholds.
    package static func run(_ source: PackageSource, context: RuleContext, depth: PackageScanner.Depth = .full, digests: Bool = true,
                    sink: (any EntrySink)? = nil, cancellation: Cancellation? = nil, supplied: [ArchivePath: SuppliedFile] = [:],
                    progress: ((Int64, Int64) -> Void)? = nil) throws -> PackageCheck {
        // The reader (and the TOC it may hold) is let go before the rules build their tables.
        var facts = try { () throws -> PackageFacts in
            var opened = try source.open(context.limits)
            var scanner = PackageScanner(limits: context.limits, depth: depth, digests: digests, progress: progress)
            scanner.cancellation = cancellation
            scanner.supplied = supplied
            try scanner.scan(opened.reader, into: &opened.facts, sink: sink)
            return opened.facts
        }()
        describeTruncation(&facts, path: source.path)
        let diagnostics = Rules.check(facts, context)
        return PackageCheck(path: source.path, facts: facts,
                            diagnostics: facts.wrapper.map { WrappingFolder.withArchivePaths(diagnostics, wrapper: $0) } ?? diagnostics)
    }

    /// A xar cut short breaks off at the first file whose data is missing, or at a table of
    /// contents that does not add up: said instead as what it is, in `ContainerExtent`'s words,
    /// so that every command (validate, extract, inspect, diff) describes a cut package alike.
    package static func describeTruncation(_ facts: inout PackageFacts, path: String) {
        guard facts.stoppedEarly, facts.format == .xar, let problem = ContainerExtent.xarProblem(path) else { return }
        facts.readFailures = facts.readFailures.map {
            $0.code == .unreadableArchive ? Diagnostic(.unreadableArchive, path: nil, problem) : $0
        }
    }

    /// True when no finding is an error (or, when `strict`, no finding at all).
    public func isValid(strict: Bool = false) -> Bool { !diagnostics.failing(strict: strict) }

    /// The package's ContentInfo, when both keys are present.
    public var contentInfo: ContentInfo? { facts.parsedContentInfo?.contentInfo }

    /// This package as the previous version of another, when its version is readable.
    public var asPrevious: PreviousPackage? {
        guard let info = contentInfo, let version = ContentVersion(info.contentVersion) else { return nil }
        return PreviousPackage(productIdentifier: info.productIdentifier, contentVersion: version,
                               payloadDigests: PayloadDigests.of(facts))
    }
}
