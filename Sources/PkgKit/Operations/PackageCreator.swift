import Foundation

/// Builds a package from a folder: gathers the tree, fills in or checks ContentInfo.plist, runs
/// every rule, and only then writes the package, atomically.
public enum PackageCreator {
    /// Runs `request`. Returns the result with diagnostics; `output` is nil when errors stopped
    /// it, and then nothing was written. Throws `CreateFailure` when input cannot be read or the
    /// output cannot be written.
    public static func create(_ request: CreateRequest, progress: ((Int64, Int64) -> Void)? = nil) throws -> CreateResult {
        do {
            return try run(request, progress: progress)
        } catch let error as ReadError {
            throw CreateFailure(message: describe(error))
        } catch let error as WriteError {
            throw CreateFailure(message: describe(error))
        }
    }

    private static func run(_ request: CreateRequest, progress: ((Int64, Int64) -> Void)?) throws -> CreateResult {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: request.source, isDirectory: &isFolder), isFolder.boolValue else {
            throw CreateFailure(message: "\(request.source): no such folder; create takes a folder of content")
        }
        let root = Array(request.source.utf8)
        let structured = isRegularFile(request.source + "/" + ContentInfo.fileName) && isDirectory(request.source + "/Contents")

        var previous: PreviousPackage?
        var diagnostics: [Diagnostic] = []
        if let old = request.previous {
            let check = try PackageCheck.run(old, context: RuleContext(purpose: .validate, limits: request.limits))
            guard let asPrevious = check.asPrevious else {
                let reasons = check.diagnostics.filter { $0.severity == .error }.map { "\($0.code.rawValue): \($0.message)" }
                throw CreateFailure(message: "\(old): cannot read the previous package's ContentInfo.plist (\(reasons.joined(separator: "; ")))")
            }
            previous = asPrevious
        }

        // ContentInfo.plist: from --plist, else the root one, else made from the flags.
        var plistBytes: [UInt8]?
        if let plist = request.plist {
            guard let data = FileManager.default.contents(atPath: plist) else { throw CreateFailure(message: "\(plist): cannot read the --plist file") }
            plistBytes = Array(data)
        } else if structured {
            guard let data = FileManager.default.contents(atPath: request.source + "/" + ContentInfo.fileName) else {
                throw CreateFailure(message: "\(request.source)/\(ContentInfo.fileName): cannot read it")
            }
            plistBytes = Array(data)
        }
        var expectedVersion = request.contentVersion
        let plistInfo = plistBytes.map { ParsedContentInfo(data: Data($0)) }
        if let part = request.bump {
            let baseText = previous?.contentVersion.description ?? plistInfo?.contentVersion ?? request.contentVersion
            guard let baseText, let base = ContentVersion(baseText) else {
                throw CreateFailure(message: "--bump \(part.rawValue) needs a version to start from: give --previous or a ContentInfo.plist with a valid ContentVersion")
            }
            guard let bumped = base.bumped(part) else {
                throw CreateFailure(message: "--bump \(part.rawValue) from \(base) passes the largest version number")
            }
            expectedVersion = bumped.description
        }
        plistBytes = try effectivePlist(plistBytes, parsed: plistInfo, productIdentifier: request.productIdentifier,
                                        contentVersion: expectedVersion, overrideVersion: request.bump != nil)

        var items: [SourceItem] = []
        if let plistBytes {
            items.append(SourceItem(path: ArchivePath(ContentInfo.fileName), kind: .file, mode: 0o644, size: Int64(plistBytes.count), origin: .data(plistBytes)))
        }
        if structured {
            for item in try FolderWalker.walk(root: root, limits: request.limits) where item.path.string != ContentInfo.fileName {
                items.append(item)
            }
        } else {
            items.append(SourceItem(path: ArchivePath("Contents"), kind: .directory, mode: 0o755, size: 0, origin: .none))
            items += try FolderWalker.walk(root: root, prefix: Array("Contents".utf8), limits: request.limits)
        }

        // Junk is left out, and said so.
        var skipped: [String] = []
        items.removeAll { item in
            guard JunkFileRule.isJunk(item.path) else { return false }
            if JunkFileRule.isJunkItself(item.path) {
                skipped.append(item.path.string)
                diagnostics.append(Diagnostic(.junkFile, path: item.path.description, "file-system or version-control litter: left out of the package"))
            }
            return true
        }

        let output = request.output ?? "./" + ((plistInfo?.productIdentifier ?? request.productIdentifier).map { ProductIdentifier.isValid($0) ? $0 : "package" } ?? "package") + ".pkg"
        var facts = PackageFacts()
        facts.archiveName = String(output.split(separator: "/").last ?? Substring(output))
        let scanner = PackageScanner(limits: request.limits, depth: .head)
        try scanner.scan(FolderReader(items: items), into: &facts)
        let context = RuleContext(purpose: .create, limits: request.limits, expectedProductIdentifier: request.productIdentifier,
                                  expectedContentVersion: expectedVersion, previous: previous)
        diagnostics += Rules.check(facts, context)
        let info = facts.parsedContentInfo
        var result = CreateResult(output: nil, format: request.options.format, productIdentifier: info?.productIdentifier,
                                  contentVersion: info?.contentVersion, fileCount: facts.fileCount, payloadBytes: facts.payloadBytes,
                                  archiveBytes: nil, sha256: nil, skipped: skipped, diagnostics: diagnostics)
        if diagnostics.failing() { return result }

        let file = try AtomicFile(destination: output)
        let total = facts.entries.filter { $0.kind == .file }.reduce(Int64(0)) { $0 + $1.size }
        // Only content-unchanged, against a previous package, needs the facts and each file's
        // digest after writing; otherwise they are let go first (tens of MB on 100,000 files).
        let comparing = previous?.payloadDigests != nil
        if !comparing { facts = PackageFacts() }
        let written: WrittenPackage
        switch request.options.format {
        case .xar:
            written = try XarWriter(options: request.options, scratchDirectory: AtomicFile.directory(of: output))
                .write(items, to: file.output, listFiles: comparing, progress: { progress?($0, total) })
        case .zip:
            written = try ZipWriter(options: request.options).write(items, to: file.output, progress: { progress?($0, total) })
        }
        if written.archiveBytes > request.limits.maxSize {
            file.discard()
            result.diagnostics.append(Diagnostic(.sizeLimit, path: nil, "the package would be \(written.archiveBytes) bytes, over the limit of \(request.limits.maxSize): split the content into several products"))
            return result
        }
        // content-unchanged needs the digests the writer computed.
        if comparing {
            let digests = Dictionary(written.files.map { ($0.path, $0.sha1) }, uniquingKeysWith: { first, _ in first })
            for (index, entry) in facts.entries.enumerated() where entry.kind == .file {
                facts.entries[index].sha1 = digests[entry.path.string]
            }
            result.diagnostics += ContentUnchangedRule().check(facts, context)
        }
        try file.commit()
        result.output = output
        result.archiveBytes = written.archiveBytes
        result.sha256 = written.sha256
        return result
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

    private static func isRegularFile(_ path: String) -> Bool {
        (try? FileManager.default.attributesOfItem(atPath: path)[.type] as? FileAttributeType) == .typeRegular
    }

    private static func isDirectory(_ path: String) -> Bool {
        (try? FileManager.default.attributesOfItem(atPath: path)[.type] as? FileAttributeType) == .typeDirectory
    }

    static func describe(_ error: ReadError) -> String {
        switch error {
        case .io(let path, let message): return "\(path): \(message)"
        case .unreadable(let path, let message), .checksumMismatch(let path, let message), .duplicateEntry(let path, let message): return "\(path ?? "package"): \(message)"
        }
    }

    static func describe(_ error: WriteError) -> String {
        switch error {
        case .io(let path, let message): return "\(path): \(message)"
        case .compression(let message): return message
        case .sourceChanged(let path): return "\(path): the file changed while the package was being written; run create again"
        }
    }
}
