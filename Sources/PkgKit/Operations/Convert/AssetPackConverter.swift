import Foundation
import PkgKitDiagnostics
import PkgKitIdentity
import PkgKitFormat
import PkgKitChecking
import PkgKitReports
import PkgKitInstall
import PkgKitSupport

/// Turns hosted In-App Purchase content packages into Background Assets asset packs, ready for
/// Apple's `xcrun ba-package` (docs/background-assets.md, `pkgtool convert --to background-assets`).
///
/// For each product it writes `OUT/<packID>/` (the package's ContentInfo.plist and its
/// Contents/ tree, byte for byte) and `OUT/<packID>.json` (the ba-package manifest), and
/// `OUT/README.txt` with the commands left to run and the product → pack ID table.
///
/// - Every package is checked against every rule first, and reported as `validate` reports it;
///   if any is invalid, unreadable, or cannot be converted beside the others (two products whose
///   pack IDs collide, also in letter case, one version given twice with different contents),
///   nothing in `OUT` changes. Two files of one package whose names differ only in letter case
///   or Unicode normalization are an error here (a warning in `validate`): ba-package runs on a
///   Mac, whose disk would keep only one of them.
/// - One pack per product: of several versions given, the latest is converted and the others
///   are listed as superseded. Equal versions (`1.0` and `1.0.0`) with the same files are one
///   version: the first given is converted.
/// - Each package that is converted is read once in full (after a first look at its headers),
///   checksums verified, while its files are written into a hidden staging folder inside `OUT`.
///   Only when every package has passed are the staged folders and manifests renamed into
///   place, each pack folder replacing the previous one whole; other files in `OUT` are left
///   alone. A failure or interruption before that leaves `OUT` as it was.
public struct AssetPackConverter: Sendable {
    /// The output folder (`--out DIR`), created with its parents when missing.
    public var output: String

    /// The README written into the output folder.
    public static let readmeName = "README.txt"

    /// A converter writing into `output` (trailing slashes dropped).
    public init(output: String) {
        var trimmed = output
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed.removeLast() }
        self.output = trimmed
    }

    /// Converts `packages` (archives or unpacked folders, as `validate` reads them).
    ///
    /// Returns a report whose status says what happened: `converted` (every pack written),
    /// `refused` (a package is invalid or two cannot be converted together: nothing written) or
    /// `failed` (an input or the output folder could not be read or written: nothing changed).
    /// Throws only `OperationCancelled`, when `options.cancellation` was set before the packs moved into place.
    public func convert(_ packages: [String], options: ConvertOptions = ConvertOptions()) throws -> ConvertReport {
        let context = RuleContext(purpose: .validate, limits: options.limits)

        // 1. A first look at every package: names, types, links, declared sizes and the plist.
        var looks: [FirstLook] = []
        for path in packages {
            try options.cancellation?.check()
            do {
                let check = Self.judged(try PackageCheck.run(path, context: context, depth: .headers, digests: false))
                looks.append(FirstLook(path: path, info: check.isValid() ? check.contentInfo : nil))
            } catch let ReadError.io(_, message) {
                looks.append(FirstLook(path: path, unreadable: message))
            }
        }

        // 2. Which package becomes which pack, and what stops them all.
        let plan = ConversionPlan(looks)
        var diagnostics = plan.diagnostics

        // 3. One full pass over each package: the winners are staged as they are read, every
        //    other package is checked the same way (nothing written) for a complete report.
        let staging: PackStaging?
        if plan.canWrite {
            do {
                staging = try PackStaging(output: output)
            } catch let error as InstallError {
                return ConvertReport(status: .failed, packages: [], diagnostics: diagnostics + [Self.ioDiagnostic(error)])
            }
        } else {
            staging = nil
        }
        var checks: [PackageCheck?] = Array(repeating: nil, count: looks.count)
        var reports: [PackageReport] = []
        do {
            for (index, look) in looks.enumerated() {
                try options.cancellation?.check()
                if let message = look.unreadable {
                    reports.append(Self.unreadableReport(look.path, message))
                    continue
                }
                let digests = plan.needsDigests.contains(index)
                let check: PackageCheck
                if let staging, let packID = plan.packID(ofWinner: index) {
                    check = Self.judged(try staging.stage(look.path, as: packID, context: context, digests: digests, options: options))
                    if check.isValid(), check.contentInfo != look.info {
                        diagnostics.append(Diagnostic(.unreadableArchive, path: nil,
                            "\(look.path): the package changed while it was being converted: nothing was converted; run convert again"))
                    }
                } else {
                    check = Self.judged(try PackageCheck.run(look.path, context: context, digests: digests,
                                                             cancellation: options.cancellation, progress: options.progress))
                }
                checks[index] = check
                reports.append(PackageReport(check, strict: false))
            }
            diagnostics += plan.sameVersionConflicts(checks)

            // 4. Everything passed: the manifests and README, then every pack into place.
            let allValid = reports.allSatisfy(\.valid) && !diagnostics.failing()
            guard let staging, allValid else {
                staging?.discard()
                let unreadable = looks.contains { $0.unreadable != nil }
                return ConvertReport(status: unreadable ? .failed : .refused, packages: reports, diagnostics: diagnostics)
            }
            let packs = plan.winners.map { winner in
                ConvertedPack(productIdentifier: winner.info.productIdentifier, contentVersion: winner.info.contentVersion,
                              assetPackID: winner.packID, manifest: output + "/" + winner.packID + ".json",
                              directory: output + "/" + winner.packID, package: winner.path)
            }.sorted { $0.assetPackID < $1.assetPackID }
            let report = ConvertReport(status: .converted, packs: packs, packages: reports,
                                       superseded: plan.superseded.map(\.path), diagnostics: diagnostics)
            for pack in packs {
                let manifest = AssetPackManifest(assetPackID: pack.assetPackID, downloadPolicy: options.downloadPolicy,
                                                 platforms: options.manifestPlatforms)
                try staging.stageFile(pack.assetPackID + ".json", Data(manifest.jsonText().utf8))
            }
            let listed = (packs + Self.earlierPacks(in: output, excluding: Set(packs.map(\.assetPackID))))
                .sorted { $0.assetPackID < $1.assetPackID }
            try staging.stageFile(Self.readmeName, Data(Self.readme(listed).utf8))
            try staging.commit(packIDs: packs.map(\.assetPackID))
            return report
        } catch let error as InstallError {
            staging?.discard()
            return ConvertReport(status: .failed, packages: reports, diagnostics: diagnostics + [Self.ioDiagnostic(error)])
        } catch let ReadError.io(path, message) {
            staging?.discard()
            return ConvertReport(status: .failed, packages: reports + [Self.unreadableReport(path, message)], diagnostics: diagnostics)
        } catch {
            staging?.discard()
            throw error
        }
    }

    /// `check` as convert judges it: what validate only warns of, two files a Mac's disk would
    /// merge, is an error here, since ba-package runs on a Mac and would pack one of them.
    package static func judged(_ check: PackageCheck) -> PackageCheck {
        var judged = check
        judged.diagnostics = check.diagnostics.map { diagnostic in
            guard diagnostic.code == .caseCollision else { return diagnostic }
            return Diagnostic(.caseCollision, path: diagnostic.path,
                              diagnostic.message + " (convert refuses this: ba-package runs on a Mac)", severity: .error)
        }
        return judged
    }

    /// The report of a path that could not be read at all.
    static func unreadableReport(_ path: String, _ message: String) -> PackageReport {
        PackageReport(PackageCheck(path: path, facts: PackageFacts(), diagnostics: [
            Diagnostic(.unreadableInput, path: path, "\(message): give the path of a package or an unpacked folder")]), strict: false)
    }

    /// The text of `OUT/README.txt`: what the folder holds, the commands to run in it, and the
    /// product → pack ID table, for `packs` (this run's and those converted earlier). It names no
    /// time, host or absolute path: the same packs give the same bytes.
    static func readme(_ packs: [ConvertedPack]) -> String {
        let listing = ConvertReport(status: .converted, packs: packs)
        return """
            Background Assets asset packs
            =============================

            Converted for Background Assets from hosted In-App Purchase content packages
            (`pkgtool convert`). Each asset pack is a folder holding a package's ContentInfo.plist and its
            Contents/ tree as they were, and beside it the pack's manifest for ba-package,
            <pack ID>.json (its download policy and platforms).

            To build the packs, run these commands in this folder, on a Mac with Xcode:

            \(listing.commands.joined(separator: "\n"))

            Each command writes <pack ID>.aar: upload it to App Store Connect (Apple-hosted asset
            packs) or serve it from your own server.

            Then, in the app (docs/background-assets.md in pkgtool's documentation shows each
            step): the Info.plist keys (BAHasManagedAssetPacks, BAUsesAppleHosting, BAAppGroupID),
            a downloader extension target sharing an app group with the app, gating each pack by
            the purchase of its product, and what becomes of content already in Documents.

            Products and their asset packs:

            \(listing.table.joined(separator: "\n"))

            """
    }

    /// The packs an earlier conversion left in `output` and this one does not replace: each
    /// `<id>.json` whose `assetPackID` is `<id>`, beside a folder `<id>/` whose ContentInfo.plist
    /// names the product. Anything else in the folder is not a pack and is not listed.
    static func earlierPacks(in output: String, excluding: Set<String>) -> [ConvertedPack] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: output)) ?? []
        return names.compactMap { name -> ConvertedPack? in
            guard name.hasSuffix(".json"), !name.hasPrefix(".") else { return nil }
            let packID = String(name.dropLast(".json".count))
            guard !excluding.contains(packID),
                  let manifest = FileManager.default.contents(atPath: output + "/" + name), manifest.count < 1 << 16,
                  let object = try? JSONSerialization.jsonObject(with: manifest) as? [String: Any],
                  object["assetPackID"] as? String == packID,
                  let plist = FileManager.default.contents(atPath: output + "/" + packID + "/" + ContentInfo.fileName),
                  let info = ParsedContentInfo(data: plist).contentInfo else { return nil }
            return ConvertedPack(productIdentifier: info.productIdentifier, contentVersion: info.contentVersion, assetPackID: packID,
                                 manifest: output + "/" + name, directory: output + "/" + packID, package: "")
        }
    }

    static func ioDiagnostic(_ error: InstallError) -> Diagnostic {
        var diagnostic = error.diagnostic
        diagnostic.words.append(": nothing was converted and the output folder is as it was")
        return diagnostic
    }
}

/// What the first look learnt of one package.
struct FirstLook {
    package var path: String
    /// The plist's keys, when the first look found the package valid.
    package var info: ContentInfo?
    /// Why the path could not be read at all.
    package var unreadable: String?
}

/// Which package becomes which pack: the latest version of each product, and what keeps the
/// packages from being converted together.
struct ConversionPlan {
    struct Winner {
        package var index: Int
        package var path: String
        package var info: ContentInfo
        var packID: String
    }

    /// The package converted for each product.
    package private(set) var winners: [Winner] = []
    /// Packages left out for a later (or the same) version of their product.
    package private(set) var superseded: [(index: Int, path: String, winner: Int)] = []
    /// Pack ID collisions.
    package private(set) var diagnostics: [Diagnostic] = []
    /// Packages whose files must be hashed: a version given twice is compared by content.
    package private(set) var needsDigests: Set<Int> = []
    /// False when some package cannot be converted whatever the full pass finds.
    package private(set) var canWrite = true

    package init(_ looks: [FirstLook]) {
        guard looks.allSatisfy({ $0.info != nil }) else {
            canWrite = false
            return
        }
        var byProduct: [String: [Int]] = [:]
        var order: [String] = []
        for (index, look) in looks.enumerated() {
            let id = look.info!.productIdentifier
            if byProduct[id] == nil { order.append(id) }
            byProduct[id, default: []].append(index)
        }
        for id in order {
            let indices = byProduct[id]!
            // The latest version; of equal versions, the first given.
            let best = indices.max { a, b in
                let va = ContentVersion(looks[a].info!.contentVersion)!, vb = ContentVersion(looks[b].info!.contentVersion)!
                return va < vb || (va == vb && a > b)
            }!
            let bestVersion = ContentVersion(looks[best].info!.contentVersion)!
            winners.append(Winner(index: best, path: looks[best].path, info: looks[best].info!,
                                  packID: AssetPackID.make(fromProductIdentifier: id)))
            for index in indices where index != best {
                superseded.append((index, looks[index].path, best))
                if ContentVersion(looks[index].info!.contentVersion)! == bestVersion {
                    needsDigests.formUnion([index, best])
                }
            }
        }
        for winner in winners where winner.packID.isEmpty {
            diagnostics.append(Diagnostic(.invalidProductIdentifier, path: nil,
                "\(winner.info.productIdentifier) (\(winner.path)) has no letter or digit to make an asset pack ID of: App Store Connect accepts only letters, digits and inner hyphens; rename the product"))
            canWrite = false
        }
        var byKey: [String: [Winner]] = [:]
        for winner in winners where !winner.packID.isEmpty {
            byKey[AssetPackID.collisionKey(winner.packID), default: []].append(winner)
        }
        for winner in winners where !winner.packID.isEmpty {
            let clashing = byKey[AssetPackID.collisionKey(winner.packID)]!
            guard clashing.count > 1, clashing[0].index == winner.index else { continue }
            let names = clashing.map { "\($0.info.productIdentifier) (\($0.path))" }.joined(separator: " and ")
            let spellings = Set(clashing.map(\.packID)).sorted()
            let clash = spellings.count == 1
                ? "would share the asset pack ID \(winner.packID) (a pack ID keeps only letters, digits and inner hyphens)"
                : "would have the asset pack IDs \(spellings.joined(separator: " and ")), one folder on a Mac's disk, which ignores case"
            diagnostics.append(Diagnostic(.assetPackIDCollision, path: nil,
                "\(names) \(clash): convert them into separate folders, or rename a product"))
            canWrite = false
        }
    }

    /// The pack ID a package is converted to, when it is its product's winner.
    func packID(ofWinner index: Int) -> String? {
        winners.first { $0.index == index }?.packID
    }

    /// One version of a product given twice with different files: which one to convert is not
    /// for pkgtool to guess.
    func sameVersionConflicts(_ checks: [PackageCheck?]) -> [Diagnostic] {
        var found: [Diagnostic] = []
        for (index, path, winner) in superseded where needsDigests.contains(index) {
            guard let mine = checks[index], let theirs = checks[winner], mine.isValid(), theirs.isValid(),
                  let a = PayloadDigests.of(mine.facts), let b = PayloadDigests.of(theirs.facts), a != b else { continue }
            let info = mine.contentInfo
            found.append(Diagnostic(.versionNotBumped, path: nil,
                "\(path) and \(checks[winner]!.path) are both \(info?.productIdentifier ?? "?") \(info?.contentVersion ?? "?") with different files: give only one of them, or bump ContentVersion"))
        }
        return found
    }
}
