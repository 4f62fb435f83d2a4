import PkgKitSupport
import PkgKitDiagnostics
import PkgKitFormat
import PkgKitReports
import Foundation

/// How `AssetPackConverter` converts: the manifests' policy and platforms, the size limit, and
/// hooks for progress and interruption.
public struct ConvertOptions: Sendable {
    /// The download policy every manifest gets.
    public var downloadPolicy: AssetPackDownloadPolicy
    /// The platforms every manifest lists (repeats dropped, in `AssetPackPlatform.allCases`
    /// order); empty means iOS.
    public var platforms: [AssetPackPlatform]
    /// The size limit each package is checked against.
    public var limits: PackageLimits
    /// Called as a package is read in full: bytes done and total, of that package.
    public var progress: (@Sendable (Int64, Int64) -> Void)?
    /// Checked between packages and while reading: once set, the conversion stops, removes what
    /// it staged, changes nothing in the output folder and throws `OperationCancelled`. Once the
    /// packs are being moved into place it is no longer checked.
    public var cancellation: Cancellation?

    /// Options with on-demand packs for iOS and the default 2 GiB limit unless given.
    public init(downloadPolicy: AssetPackDownloadPolicy = .onDemand, platforms: [AssetPackPlatform] = [.iOS],
                limits: PackageLimits = PackageLimits(), progress: (@Sendable (Int64, Int64) -> Void)? = nil,
                cancellation: Cancellation? = nil) {
        self.downloadPolicy = downloadPolicy
        self.platforms = platforms
        self.limits = limits
        self.progress = progress
        self.cancellation = cancellation
    }

    /// The platforms every manifest lists: `platforms` without repeats in a fixed order, or iOS.
    public var manifestPlatforms: [AssetPackPlatform] {
        platforms.isEmpty ? [.iOS] : AssetPackPlatform.canonical(platforms)
    }
}

/// One asset pack written by `convert` (the JSON `packs` of docs/background-assets.md).
public struct ConvertedPack: Sendable, Codable, Equatable {
    /// The product the pack comes from.
    public var productIdentifier: String
    /// The version converted: the latest one given for the product.
    public var contentVersion: String
    /// The asset pack ID (`AssetPackID.make`).
    public var assetPackID: String
    /// The ba-package manifest: `DIR/<packID>.json`.
    public var manifest: String
    /// The pack's folder: `DIR/<packID>`, holding ContentInfo.plist and Contents/.
    public var directory: String
    /// The package it was converted from, as given.
    public var package: String

    package init(productIdentifier: String, contentVersion: String, assetPackID: String, manifest: String, directory: String, package: String) {
        self.productIdentifier = productIdentifier
        self.contentVersion = contentVersion
        self.assetPackID = assetPackID
        self.manifest = manifest
        self.directory = directory
        self.package = package
    }

    /// The command that builds the pack, run in the output folder.
    public var command: String {
        "xcrun ba-package \(assetPackID).json -o \(assetPackID).aar"
    }
}

/// How a conversion ended.
public enum ConvertStatus: String, Sendable, Codable {
    /// Every pack was written (exit 0).
    case converted
    /// A package was invalid, or two packages could not both be converted: nothing was written
    /// (exit 1).
    case refused
    /// An input could not be read, or the output folder could not be written: nothing was
    /// changed (exit 2).
    case failed
}

extension ConvertStatus: RefusedOrFailed, OutcomeReporting {
    public var outcome: Outcome {
        switch self {
        case .converted: return .success
        case .refused: return .refused
        case .failed: return .failed
        }
    }
}

/// What `convert` did (its `--json` output): the packs written, every package's check, and the
/// findings that concern several packages at once.
public struct ConvertReport: Sendable, Codable, OutcomeReporting {
    /// How it ended.
    public var status: ConvertStatus
    /// The packs written, sorted by asset pack ID; empty unless `status` is `converted`.
    public var packs: [ConvertedPack]
    /// Each package given, in order, as `validate` reports it.
    public var packages: [PackageReport]
    /// Packages left out because a later version of the same product was given.
    public var superseded: [String]
    /// Findings about the conversion as a whole: pack ID collisions, one version given twice
    /// with different contents, unreadable inputs, write failures.
    public var diagnostics: [Diagnostic]

    /// How it ended, as its status says.
    public var outcome: Outcome { status.outcome }

    /// A report; `convert` makes them.
    public init(status: ConvertStatus, packs: [ConvertedPack] = [], packages: [PackageReport] = [],
                superseded: [String] = [], diagnostics: [Diagnostic] = []) {
        self.status = status
        self.packs = packs
        self.packages = packages
        self.superseded = superseded
        self.diagnostics = diagnostics
    }

    /// The `xcrun ba-package` commands that build the packs, one per pack, to run in the output
    /// folder.
    public var commands: [String] { packs.map(\.command) }

    /// The product → asset pack ID table, one line per pack under a header, columns aligned.
    public var table: [String] {
        let rows = [["product", "version", "asset pack ID"]] + packs.map { [$0.productIdentifier, $0.contentVersion, $0.assetPackID] }
        let widths = (0..<2).map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            row[0].padding(toLength: widths[0] + 2, withPad: " ", startingAt: 0)
                + row[1].padding(toLength: widths[1] + 2, withPad: " ", startingAt: 0) + row[2]
        }
    }
}
