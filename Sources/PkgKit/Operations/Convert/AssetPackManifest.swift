import PkgKitSupport

/// When the system downloads a Background Assets asset pack (the manifest's `downloadPolicy`).
public enum AssetPackDownloadPolicy: String, Sendable, CaseIterable, Codable {
    /// Only when the app asks for it: the manifest's `onDemand`, the default.
    case onDemand = "on-demand"
    /// During the app's installation, possibly finishing after it.
    case prefetch
    /// During the app's installation, which waits for it.
    case essential

    /// The key that names this policy inside the manifest's `downloadPolicy` object.
    public var manifestKey: String {
        switch self {
        case .onDemand: return "onDemand"
        case .prefetch: return "prefetch"
        case .essential: return "essential"
        }
    }

    /// The installation events a `prefetch` or `essential` policy applies to (none for `onDemand`).
    public var installationEventTypes: [String] {
        self == .onDemand ? [] : ["firstInstallation", "subsequentUpdate"]
    }
}

/// A platform an asset pack is built for (the manifest's `platforms`). Background Assets asset
/// packs exist on every Apple platform but watchOS.
public enum AssetPackPlatform: String, Sendable, CaseIterable, Codable {
    /// iOS and iPadOS.
    case iOS
    /// macOS.
    case macOS
    /// tvOS.
    case tvOS
    /// visionOS.
    case visionOS

    /// `platforms` without repeats, in the order of `allCases`: the manifest's bytes do not
    /// depend on the order of the flags.
    public static func canonical(_ platforms: [AssetPackPlatform]) -> [AssetPackPlatform] {
        allCases.filter(platforms.contains)
    }
}

/// Asset pack identifiers made from IAPProductIdentifiers.
public enum AssetPackID {
    /// The product identifier with every character outside `A-Z a-z 0-9` replaced by `-`, runs
    /// of `-` made one and `-` trimmed from both ends: App Store Connect accepts only letters,
    /// digits and inner hyphens in an asset pack ID (ITMS-91133). `com.example.my_book__2`
    /// becomes `com-example-my-book-2`; an identifier with no letter or digit (`_`) gives "".
    public static func make(fromProductIdentifier productIdentifier: String) -> String {
        var id = ""
        for scalar in productIdentifier.unicodeScalars {
            if ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar) {
                id.unicodeScalars.append(scalar)
            } else if !id.isEmpty, id.last != "-" {
                id.append("-")
            }
        }
        if id.last == "-" { id.removeLast() }
        return id
    }

    /// The key under which two pack IDs collide: pack IDs that differ only in letter case name
    /// the same folder on a Mac's case-insensitive disk, where ba-package runs.
    static func collisionKey(_ packID: String) -> String { packID.lowercased() }
}

/// A `ba-package` manifest for one asset pack: the pack's ID, its download policy, the folder it
/// holds and its platforms. Paths are relative to the folder ba-package runs in.
public struct AssetPackManifest: Sendable, Equatable {
    /// The asset pack ID.
    public var assetPackID: String
    /// When the system downloads the pack.
    public var downloadPolicy: AssetPackDownloadPolicy
    /// The folder the pack holds (its one directory selector).
    public var directory: String
    /// The platforms the pack is for, in the order written.
    public var platforms: [AssetPackPlatform]

    /// A manifest for `assetPackID`, whose folder is named after it unless `directory` says otherwise.
    public init(assetPackID: String, downloadPolicy: AssetPackDownloadPolicy = .onDemand, directory: String? = nil,
                platforms: [AssetPackPlatform] = [.iOS]) {
        self.assetPackID = assetPackID
        self.downloadPolicy = downloadPolicy
        self.directory = directory ?? assetPackID
        self.platforms = platforms
    }

    /// The manifest as JSON: keys in a fixed order, two-space indentation, a final newline, so
    /// that the same pack always gives the same bytes.
    ///
    /// ```json
    /// {
    ///   "assetPackID": "com-example-book-chapter1",
    ///   "downloadPolicy": {
    ///     "onDemand": {}
    ///   },
    ///   "fileSelectors": [
    ///     {
    ///       "directory": "com-example-book-chapter1"
    ///     }
    ///   ],
    ///   "platforms": [
    ///     "iOS"
    ///   ]
    /// }
    /// ```
    public func jsonText() -> String {
        let events = downloadPolicy.installationEventTypes
        let policyBody = events.isEmpty
            ? "{}"
            : "{\n      \"installationEventTypes\": [\n" + events.map { "        " + jsonStringLiteral($0) }.joined(separator: ",\n") + "\n      ]\n    }"
        let platformList = platforms.isEmpty
            ? "[]"
            : "[\n" + platforms.map { "    " + jsonStringLiteral($0.rawValue) }.joined(separator: ",\n") + "\n  ]"
        return """
            {
              "assetPackID": \(jsonStringLiteral(assetPackID)),
              "downloadPolicy": {
                \(jsonStringLiteral(downloadPolicy.manifestKey)): \(policyBody)
              },
              "fileSelectors": [
                {
                  "directory": \(jsonStringLiteral(directory))
                }
              ],
              "platforms": \(platformList)
            }

            """
    }
}
