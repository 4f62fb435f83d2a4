import Foundation
import PkgKitDiagnostics
import PkgKitIdentity
import PkgKitFormat
import PkgKitChecking
import PkgKitReports
import PkgKitInstall
import PkgKitSupport

/// Builds a package from a folder: gathers the tree, fills in or checks ContentInfo.plist, runs
/// every rule, and only then writes the package, atomically.
public enum PackageCreator {
    /// Runs `request`. Returns the result with diagnostics; `output` is nil when errors stopped
    /// it, and then nothing was written. Throws `CreateFailure` when an input cannot be read or the
    /// request contradicts itself, `WriteError` when the output cannot be written, and
    /// `OperationCancelled` when `request.cancellation` is set before the package is in place.
    public static func create(_ request: CreateRequest, progress: ((Int64, Int64) -> Void)? = nil) throws -> CreateResult {
        do {
            return try run(request, progress: progress)
        } catch let error as ReadError {
            // Anything that cannot be read here is an input: the source, the plist or --previous.
            throw CreateFailure.unreadableInput(path: error.diagnostic.path, error.diagnostic.words)
        }
    }

    private static func run(_ request: CreateRequest, progress: ((Int64, Int64) -> Void)?) throws -> CreateResult {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: request.source, isDirectory: &isFolder) else {
            throw CreateFailure.unreadableInput(path: request.source, "no such file or folder")
        }
        guard isFolder.boolValue else { return try rebuild(request, progress: progress) }
        // A folder holding one folder that holds the package, as unzipping a Finder zip leaves it.
        let root = WrappingFolder.wrapper(ofFolder: request.source).map { request.source + "/" + $0 } ?? request.source
        return try build(request, from: root, progress: progress)
    }

    /// Creates the package from a package file (xar, zip, tar, installer package, wrapped or
    /// not): it is read in full and judged, unpacked beside the output, and built from there as
    /// from a folder. Only what the package itself gets wrong is judged on the file (its
    /// container, names, types, links, code); its ContentInfo.plist and its size are judged on the
    /// rebuild, with the request's flags, as a folder's are.
    private static func rebuild(_ request: CreateRequest, progress: ((Int64, Int64) -> Void)?) throws -> CreateResult {
        let context = RuleContext(purpose: .create, limits: request.limits)
        // A first look at the names and types, so that most bad packages are refused unwritten.
        let look = try PackageCheck.run(request.source, context: context, depth: .headers, digests: false,
                                        cancellation: request.cancellation)
        if let refused = refusal(look, request) { return refused }
        let staging = try CreateStaging(in: outputFolder(request))
        defer { staging.remove() }
        let full = try staging.unpack(request.source, context: context, cancellation: request.cancellation, progress: progress)
        if let refused = refusal(full, request) { return refused }
        var result = try build(request, from: staging.path, progress: progress)
        // The package's own findings, where the rebuild did not find the same again (junk
        // outside Contents/ was never unpacked); a rebuilt entry keeps its place in the archive.
        let own = findings(of: full)
        var rebuilt: [String: Diagnostic] = [:]
        for finding in own { rebuilt[key(finding)] = finding }
        result.diagnostics = result.diagnostics.map { diagnostic in
            var diagnostic = diagnostic
            diagnostic.archivePath = rebuilt[key(diagnostic)]?.archivePath
            return diagnostic
        }
        let seen = Set(result.diagnostics.map(key))
        result.diagnostics += own.filter { !seen.contains(key($0)) }.map { finding in
            guard finding.code == .junkFile else { return finding }
            if let path = finding.path, !result.skipped.contains(path) { result.skipped.append(path) }
            var junk = finding
            junk.message = leftOut
            return junk
        }
        return result
    }

    /// What create says of the junk it leaves out.
    private static let leftOut = "file-system or version-control litter: left out of the package"

    /// What a rebuild judges again with the request's flags, or judges on the output: not held
    /// against the package file given as the source. (A plist that cannot be read, or is too
    /// large to keep, is the package's own: no flag mends it.)
    private static let judgedOnRebuild: Set<DiagnosticCode> = [
        .badExtension, .sizeLimit, .missingContentInfo, .missingKey, .invalidContentVersion,
        .invalidProductIdentifier, .productIdentifierMismatch, .contentVersionMismatch, .versionNotBumped,
        .contentUnchanged, .unknownKey,
    ]

    /// The findings of a source package that are its own (see `judgedOnRebuild`).
    private static func findings(of check: PackageCheck) -> [Diagnostic] {
        check.diagnostics.filter { !judgedOnRebuild.contains($0.code) }
    }

    /// The result refusing a source package whose own findings hold an error; nil when it has none.
    private static func refusal(_ check: PackageCheck, _ request: CreateRequest) -> CreateResult? {
        let own = findings(of: check)
        guard own.failing() else { return nil }
        let info = check.facts.parsedContentInfo
        return CreateResult(output: nil, format: request.options.format, productIdentifier: info?.productIdentifier,
                            contentVersion: info?.contentVersion, fileCount: check.facts.fileCount,
                            payloadBytes: check.facts.payloadBytes, archiveBytes: nil, sha256: nil, skipped: [], diagnostics: own)
    }

    /// One finding as a key: the same code about the same path.
    private static func key(_ diagnostic: Diagnostic) -> String {
        diagnostic.code.rawValue + "\u{0}" + (diagnostic.path ?? "")
    }

    /// The folder the output goes to (see `outputPath`).
    private static func outputFolder(_ request: CreateRequest) -> String {
        guard let output = request.output else { return "." }
        if output.hasSuffix("/") || isDirectory(output) { return output }
        return AtomicFile.directory(of: output)
    }

    /// Creates the package from the folder `source` (the request's source, or what stands for
    /// it: the folder inside its wrapper, a package file unpacked): reads what the request
    /// refers to, gathers the tree, judges it, and writes the package only if it passes.
    private static func build(_ request: CreateRequest, from source: String, progress: ((Int64, Int64) -> Void)?) throws -> CreateResult {
        let hasPlist = isRegularFile(source + "/" + ContentInfo.fileName)
        // A source holding Contents/ is the package root, plist or not: its other entries are
        // outside-contents, never Contents/Contents/.
        let structured = isDirectory(source + "/Contents")
        let previous = try previousPackage(request)
        var plistBytes = try givenPlist(request, source: source, structured: structured, hasPlist: hasPlist)
        let plistInfo = plistBytes.map { ParsedContentInfo(data: Data($0)) }
        let (expectedVersion, bumpFailure) = try contentVersion(request, previous: previous, plist: plistInfo)
        // Without --product-id, a plist that does not name the product takes --previous's: the
        // new version belongs to the same product.
        let productIdentifier = request.productIdentifier
            ?? (plistInfo?.productIdentifier == nil ? previous?.productIdentifier : nil)
        plistBytes = try effectivePlist(plistBytes, parsed: plistInfo, productIdentifier: productIdentifier,
                                        contentVersion: expectedVersion, overrideVersion: request.bump != nil)
        let output = outputPath(request, productIdentifier: plistInfo?.productIdentifier ?? productIdentifier,
                                contentVersion: expectedVersion ?? plistInfo?.contentVersion)

        // Whether any file is executable code is the one thing the check needs the files' data
        // for: they are looked at on every core as the walk lists them.
        let executables = ExecutableScan(jobs: request.options.jobs)
        let tree = try gather(request, source: source, structured: structured, plist: plistBytes, output: output, executables: executables)
        var facts = try scan(tree.items, output: output, executables: executables, limits: request.limits)
        let context = RuleContext(purpose: .create, limits: request.limits, expectedProductIdentifier: request.productIdentifier,
                                  expectedContentVersion: expectedVersion, previous: previous)
        var diagnostics = tree.diagnostics
        diagnostics += Rules.check(facts, context).map {
            explained($0, request: request, hasPlist: hasPlist, structured: structured, output: output)
        }
        if let bumpFailure { diagnostics.append(bumpFailure) }
        let info = facts.parsedContentInfo
        var result = CreateResult(output: nil, format: request.options.format, productIdentifier: info?.productIdentifier,
                                  contentVersion: info?.contentVersion, fileCount: facts.fileCount, payloadBytes: facts.payloadBytes,
                                  archiveBytes: nil, sha256: nil, skipped: tree.skipped, diagnostics: diagnostics)
        if diagnostics.failing() { return result }
        // Only a package that passes the rules could be written: only then is an output that is
        // the --previous package itself worth refusing.
        if let old = request.previous, sameFile(old, output) { throw CreateFailure.outputIsPrevious(path: output) }
        if sameFile(request.source, output) { throw CreateFailure.outputIsSource(path: output) }
        try request.cancellation?.check()
        try write(tree.items, facts: &facts, context: context, request: request, to: output, progress: progress, into: &result)
        return result
    }

    /// The `--previous` package, read and judged, if the request names one.
    private static func previousPackage(_ request: CreateRequest) throws -> PreviousPackage? {
        guard let old = request.previous else { return nil }
        let check = try PackageCheck.run(old, context: RuleContext(purpose: .validate, limits: request.limits),
                                         cancellation: request.cancellation)
        guard let previous = check.asPrevious else {
            let reasons = check.diagnostics.filter { $0.severity == .error }.map { "\($0.code.rawValue): \($0.message)" }
            throw CreateFailure.unreadableInput(path: old, "cannot read the previous package's ContentInfo.plist (\(reasons.joined(separator: "; ")))")
        }
        return previous
    }

    /// The ContentInfo.plist given: from --plist, else the source root's; nil when there is none
    /// (it is then made from the flags).
    private static func givenPlist(_ request: CreateRequest, source: String, structured: Bool, hasPlist: Bool) throws -> [UInt8]? {
        if let plist = request.plist {
            guard let data = FileManager.default.contents(atPath: plist) else {
                throw CreateFailure.unreadableInput(path: plist, "cannot read \(hint: .givenPlist)")
            }
            return Array(data)
        }
        guard structured && hasPlist else { return nil }
        let path = source + "/" + ContentInfo.fileName
        guard let data = FileManager.default.contents(atPath: path) else { throw CreateFailure.unreadableInput(path: path, "cannot read it") }
        return Array(data)
    }

    /// The ContentVersion the package is to have: --content-version, or the one --bump makes
    /// from --previous's (else the plist's); with the finding for a bump past the largest version.
    private static func contentVersion(_ request: CreateRequest, previous: PreviousPackage?,
                                       plist: ParsedContentInfo?) throws -> (String?, bumpFailure: Diagnostic?) {
        guard let part = request.bump else { return (request.contentVersion, nil) }
        guard request.contentVersion == nil else { throw CreateFailure.bumpWithContentVersion }
        let baseText = previous?.contentVersion.description ?? plist?.contentVersion
        guard let baseText, let base = ContentVersion(baseText) else { throw CreateFailure.nothingToBump(part) }
        if let bumped = base.bumped(part) { return (bumped.description, nil) }
        return (nil, Diagnostic(.invalidContentVersion, path: ContentInfo.fileName,
            words: "\(hint: .bump(part: part.rawValue)) from \(base) passes the largest version number (\(Int32.max)): choose another part to bump"))
    }

    /// What the walk of a source found: the package's items, the junk it left out, and what it
    /// says of that junk.
    private struct GatheredTree {
        var items: [SourceItem] = []
        var skipped: [String] = []
        var diagnostics: [Diagnostic] = []
    }

    /// Walks `source` into the package's items (the plist first), handing each to `executables`
    /// as it comes; junk is left out, and said so.
    private static func gather(_ request: CreateRequest, source: String, structured: Bool, plist: [UInt8]?, output: String,
                               executables: ExecutableScan) throws -> GatheredTree {
        // What the walk finds that is not content: the source's own ContentInfo.plist when it is
        // the package root, a --plist file inside the source, and an output inside the source (a
        // package written there by an earlier run).
        let plistInside = request.plist.flatMap { relativePath(of: $0, in: source) }.map { ArchivePath(structured ? $0 : "Contents/" + $0) }
        let outputInside = relativePath(of: output, in: source).map { ArchivePath(structured ? $0 : "Contents/" + $0) }
        func notContent(_ item: SourceItem) -> Bool {
            (structured && item.path.string == ContentInfo.fileName) || item.path == plistInside || item.path == outputInside
        }

        var tree = GatheredTree()
        if let plist {
            tree.items.append(SourceItem(path: ArchivePath(ContentInfo.fileName), kind: .file, mode: 0o644, size: Int64(plist.count), origin: .data(plist)))
        }
        if !structured {
            tree.items.append(SourceItem(path: ArchivePath("Contents"), kind: .directory, mode: 0o755, size: 0, origin: .none))
        }
        executables.add(tree.items)
        try request.cancellation?.check()
        var outputFound = false
        try FolderWalker.walk(root: Array(source.utf8), prefix: structured ? [] : Array("Contents".utf8), limits: request.limits) { found in
            let start = tree.items.count
            for item in found {
                if notContent(item) {
                    if item.path == outputInside { outputFound = true }
                } else if JunkFileRule.isJunk(item.path) {
                    if JunkFileRule.isJunkItself(item.path) {
                        tree.skipped.append(item.path.string)
                        tree.diagnostics.append(Diagnostic(.junkFile, path: item.path.description, leftOut))
                    }
                } else {
                    tree.items.append(item)
                }
            }
            executables.add(tree.items[start...])
        }
        if outputFound, let outputInside { tree.skipped.insert(outputInside.string, at: 0) }
        return tree
    }

    /// The facts the rules judge: what the scan reads of `items`, with the executable code
    /// `executables` found.
    private static func scan(_ items: [SourceItem], output: String, executables: ExecutableScan, limits: PackageLimits) throws -> PackageFacts {
        var facts = PackageFacts()
        facts.archiveName = String(output.split(separator: "/").last ?? Substring(output))
        // The scan takes what the walk found, while the files are still being looked at.
        let scanner = PackageScanner(limits: limits, depth: .headers)
        try scanner.scan(FolderReader(items: items), into: &facts)
        let formats = try executables.finish()
        if !formats.isEmpty {
            for index in facts.entries.indices where facts.entries[index].kind == .file {
                facts.entries[index].executable = formats[facts.entries[index].path]
            }
        }
        return facts
    }

    /// Writes the package that passed the rules to `output`, atomically, and completes `result`;
    /// a package over the size limit, or a stop, leaves nothing behind. `facts` are let go
    /// first unless content-unchanged needs them.
    private static func write(_ items: [SourceItem], facts: inout PackageFacts, context: RuleContext, request: CreateRequest,
                              to output: String, progress: ((Int64, Int64) -> Void)?, into result: inout CreateResult) throws {
        try makeFolders(AtomicFile.directory(of: output))
        let file = try AtomicFile(destination: output)
        let total = facts.entries.filter { $0.kind == .file }.reduce(Int64(0)) { $0 + $1.size }
        // Only content-unchanged, against a previous package, needs the facts and each file's
        // digest after writing; otherwise they are let go first (tens of MB on 100,000 files).
        let comparing = context.previous?.payloadDigests != nil
        if !comparing { facts = PackageFacts() }
        let written: WrittenPackage
        switch request.options.format {
        case .xar:
            written = try XarWriter(options: request.options, scratchDirectory: AtomicFile.directory(of: output))
                .write(items, to: file.output, listFiles: comparing, progress: { progress?($0, total) })
        case .zip:
            guard let support = ArchiveSupportRegistry.current else {
                file.discard()
                throw CreateFailure.cannotWrite(path: output, "\(hint: .format(OutputFormat.zip.rawValue)) needs PkgKitArchive (libarchive's zip writer); PkgKit alone writes xar")
            }
            written = try writeZip(items, support: support, options: request.options, to: file.output) { progress?($0, total) }
        }
        if written.archiveBytes > request.limits.maxSize {
            file.discard()
            result.diagnostics.append(Diagnostic(.sizeLimit, path: nil, "the package would be \(written.archiveBytes) bytes, over the limit of \(request.limits.maxSize): split the content into several products"))
            return
        }
        // content-unchanged needs the digests the writer computed.
        if comparing {
            let digests = Dictionary(written.files.map { ($0.path, $0.sha1) }, uniquingKeysWith: { first, _ in first })
            for (index, entry) in facts.entries.enumerated() where entry.kind == .file {
                facts.entries[index].sha1 = digests[entry.path.string]
            }
            result.diagnostics += ContentUnchangedRule().check(facts, context)
        }
        // The last moment a stop leaves nothing behind: the unnamed file is simply let go.
        try request.cancellation?.check()
        try file.commit()
        result.output = output
        result.archiveBytes = written.archiveBytes
        result.sha256 = written.sha256
    }

    /// A zip through `support`, hashed as it is written, as the xar writer hashes its output.
    private static func writeZip(_ items: [SourceItem], support: any ArchiveSupport, options: WriteOptions,
                                 to output: FileOutput, progress: @escaping (Int64) -> Void) throws -> WrittenPackage {
        let hasher = BackgroundHasher(descriptor: output.descriptor, path: output.path)
        defer { _ = try? hasher.finish() }
        let files = try support.writeZip(items, options: options, write: { bytes in
            try output.write(bytes)
            hasher.advance(to: output.position)
        }, progress: progress)
        return WrittenPackage(files: files, archiveBytes: output.position, sha256: try hasher.finish())
    }

    /// The plist bytes to package: the original when nothing needs filling in, else a new XML plist.
    private static func effectivePlist(_ original: [UInt8]?, parsed: ParsedContentInfo?, productIdentifier: String?,
                                       contentVersion: String?, overrideVersion: Bool) throws -> [UInt8]? {
        guard let parsed else {
            guard let productIdentifier, let contentVersion else { return original }
            return Array(try ContentInfo(contentVersion: contentVersion, productIdentifier: productIdentifier).xmlData())
        }
        guard parsed.invalidReason == nil, let original else { return original }
        var dictionary = (try? PropertyListSerialization.propertyList(from: Data(original), format: nil)) as? [String: Any] ?? [:]
        var changed = false
        if parsed.productIdentifier == nil, let productIdentifier {
            dictionary["IAPProductIdentifier"] = productIdentifier
            changed = true
        }
        if let contentVersion, parsed.contentVersion == nil || (overrideVersion && parsed.contentVersion != contentVersion) {
            dictionary["ContentVersion"] = contentVersion
            changed = true
        }
        guard changed else { return original }
        if parsed.unknownKeys.isEmpty, let id = dictionary["IAPProductIdentifier"] as? String, let version = dictionary["ContentVersion"] as? String {
            return Array(try ContentInfo(contentVersion: version, productIdentifier: id).xmlData())
        }
        return Array(try PropertyListSerialization.data(fromPropertyList: dictionary, format: .xml, options: 0))
    }

    /// Where the package goes: `-o`, into `-o`'s folder when it names one, else the current
    /// folder, under the default name `<IAPProductIdentifier>-<ContentVersion>.pkg`.
    private static func outputPath(_ request: CreateRequest, productIdentifier: String?, contentVersion: String?) -> String {
        if let output = request.output, !output.hasSuffix("/"), !isDirectory(output) { return output }
        let id = productIdentifier.flatMap { ProductIdentifier.isValid($0) ? $0 : nil }
        let version = contentVersion.flatMap { ContentVersion($0) == nil ? nil : $0 }
        let name = (id ?? "package") + (version.map { "-" + $0 } ?? "") + ".pkg"
        guard let folder = request.output else { return "./" + name }
        return (folder.hasSuffix("/") ? folder : folder + "/") + name
    }

    /// True when `a` and `b` are the same existing file (any spelling, any link to it).
    private static func sameFile(_ a: String, _ b: String) -> Bool {
        var first = stat(), second = stat()
        guard stat(a, &first) == 0, stat(b, &second) == 0 else { return false }
        return first.st_dev == second.st_dev && first.st_ino == second.st_ino
    }

    /// `path`'s place below the folder `source` (as `a/b.pkg`), or nil when it lies outside.
    private static func relativePath(of path: String, in source: String) -> String? {
        let name = String(path.split(separator: "/", omittingEmptySubsequences: false).last ?? "")
        guard !name.isEmpty, let folder = realPath(AtomicFile.directory(of: path)), let root = realPath(source) else { return nil }
        if folder == root { return name }
        let prefix = root.hasSuffix("/") ? root : root + "/"
        guard folder.hasPrefix(prefix) else { return nil }
        return String(folder.dropFirst(prefix.count)) + "/" + name
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// A finding as create sees it: `bad-extension` is about the output, `outside-contents` in a
    /// source holding Contents/ says why that folder is the package root, and
    /// `missing-content-info` says which flag is missing, or that the source's ContentInfo.plist
    /// went into the payload because there is no Contents/ beside it.
    private static func explained(_ diagnostic: Diagnostic, request: CreateRequest, hasPlist: Bool, structured: Bool,
                                  output: String) -> Diagnostic {
        var explained = diagnostic
        if diagnostic.code == .badExtension {
            explained.path = output
            return explained
        }
        if diagnostic.code == .outsideContents && structured {
            explained.message = "\(request.source) holds Contents/, so it is the package root, where only ContentInfo.plist and Contents/ may be: move this into Contents/ or remove it"
            return explained
        }
        guard diagnostic.code == .missingContentInfo, request.plist == nil else { return diagnostic }
        if hasPlist && !structured {
            explained.words = "\(request.source) has a ContentInfo.plist but no Contents/ folder, so everything in it, the plist too, became Contents/: move the content into \(request.source)/Contents/, or pass \(hint: .plistFile(path: request.source + "/ContentInfo.plist"))"
        } else if request.productIdentifier != nil, request.contentVersion == nil, request.bump == nil {
            explained.words = "\(hint: .productIdentifierSetting) was given without \(hint: .contentVersionSetting): give both to make a ContentInfo.plist (or \(hint: .plistFile(path: nil)))"
        } else if request.contentVersion != nil || request.bump != nil, request.productIdentifier == nil {
            explained.words = "a version was given without \(hint: .productIdentifierSetting): give both \(hint: .productIdentifierSetting) and \(hint: .contentVersionSetting) to make a ContentInfo.plist (or \(hint: .plistFile(path: nil)))"
        } else if structured {
            explained.words = "\(request.source) has a Contents/ folder but no ContentInfo.plist beside it: add one there, or give \(hint: .productIdentifierSetting) and \(hint: .contentVersionSetting) to make one (or \(hint: .plistFile(path: nil)))"
        } else {
            explained.words = "\(request.source) has no ContentInfo.plist: add one there with a Contents/ folder beside it, give \(hint: .productIdentifierSetting) and \(hint: .contentVersionSetting), or pass \(hint: .plistFile(path: nil))"
        }
        return explained
    }

    private static func isRegularFile(_ path: String) -> Bool {
        (try? FileManager.default.attributesOfItem(atPath: path)[.type] as? FileAttributeType) == .typeRegular
    }

    private static func isDirectory(_ path: String) -> Bool {
        (try? FileManager.default.attributesOfItem(atPath: path)[.type] as? FileAttributeType) == .typeDirectory
    }
}
