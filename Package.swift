// swift-tools-version:6.0
import PackageDescription

/// PkgKit's layers (the table of Sources/PkgKit/README.md), bottom first, one module each: a layer
/// depends on the layers it may use and no others, so the compiler refuses a use of one above it.
let pkgKitLayers: [(name: String, folder: String, mayUse: [String])] = [
    ("Support", "Support", []),
    ("Diagnostics", "Diagnostics", []),
    ("Identity", "Identity", ["Diagnostics"]),
    ("Format", "Format", ["Support", "Diagnostics"]),
    ("Checking", "Checking", ["Support", "Diagnostics", "Identity", "Format"]),
    ("Reports", "Reports", ["Diagnostics", "Identity", "Format", "Checking"]),
    ("Install", "Install", ["Support", "Diagnostics", "Identity", "Format", "Checking", "Reports"]),
    ("Operations", "Operations", ["Support", "Diagnostics", "Identity", "Format", "Checking", "Reports", "Install"]),
    ("Catalog", "Delivery/Catalog", ["Support", "Diagnostics", "Identity"]),
    ("Publish", "Delivery/Publish", ["Support", "Diagnostics", "Identity", "Format", "Checking", "Catalog"]),
    ("Transport", "Delivery/Transport", ["Support", "Diagnostics"]),
    ("Sync", "Delivery/Sync", ["Support", "Diagnostics", "Identity", "Format", "Checking", "Reports", "Install", "Catalog", "Transport"]),
]

/// What each layer's files import from outside the package.
let layerImports: [String: [Target.Dependency]] = [
    "Support": ["CXML2", "CSyscalls", .product(name: "SystemPackage", package: "swift-system")],
    "Format": [
        "CXML2", "CZlib", "CSyscalls",
        .target(name: "CDeflate", condition: .when(platforms: [.linux])),
        .target(name: "CIsal", condition: .when(platforms: [.linux])),
        .product(name: "Crypto", package: "swift-crypto"),
    ],
    "Checking": [.product(name: "Crypto", package: "swift-crypto")],
    "Install": ["CSyscalls", .product(name: "Crypto", package: "swift-crypto")],
    "Catalog": [.product(name: "Crypto", package: "swift-crypto"), .product(name: "SwiftASN1", package: "swift-asn1")],
    "Publish": [.product(name: "Crypto", package: "swift-crypto")],
    "Transport": [
        .product(name: "SwiftASN1", package: "swift-asn1"),
        .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(platforms: [.linux])),
        .product(name: "NIOCore", package: "swift-nio", condition: .when(platforms: [.linux])),
        .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(platforms: [.linux])),
        .product(name: "NIOFoundationCompat", package: "swift-nio", condition: .when(platforms: [.linux])),
        .product(name: "NIOPosix", package: "swift-nio", condition: .when(platforms: [.linux])),
        .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(platforms: [.linux])),
    ],
    "Sync": ["CSyscalls", .product(name: "Crypto", package: "swift-crypto")],
]

let package = Package(
    name: "pkgtool",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16)],
    products: [
        // The portable core an app links: zlib, libxml2, swift-crypto and swift-system only.
        .library(name: "PkgKit", targets: ["PkgKit"]),
        // What libarchive adds for tools: zip, tar, flat installer packages, the zip writer.
        .library(name: "PkgKitArchive", targets: ["PkgKitArchive"]),
        .executable(name: "pkgtool", targets: ["pkgtool"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-asn1", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        // sync's HTTP client on Linux: SwiftNIO streams with back-pressure and cancels by closing
        // the connection, where FoundationNetworking's one shared queue could wedge (bench/TRANSPORT.md).
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.0"),
        // HTTPS: trust roots beyond the system's, and why a server's certificate did not verify.
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
    ],
    targets: [
        .systemLibrary(
            name: "CArchive", pkgConfig: "libarchive",
            providers: [.apt(["libarchive-dev"]), .brew(["libarchive"])]),
        .systemLibrary(
            name: "CXML2", pkgConfig: "libxml-2.0",
            providers: [.apt(["libxml2-dev"]), .brew(["libxml2"])]),
        .systemLibrary(
            name: "CZlib", pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]),
        // Whole-buffer deflate and inflate, two to three times zlib's speed. Not in Apple's SDKs,
        // so the core links it on Linux only and keeps its zlib paths everywhere (Codec.swift).
        .systemLibrary(
            name: "CDeflate", pkgConfig: "libdeflate",
            providers: [.apt(["libdeflate-dev"]), .brew(["libdeflate"])]),
        // Streaming deflate at several times zlib's speed (create's fast levels 1-3); Linux only,
        // like libdeflate.
        .systemLibrary(
            name: "CIsal", pkgConfig: "libisal",
            providers: [.apt(["libisal-dev"]), .brew(["isa-l"])]),
        // Linux calls Glibc's Swift module leaves out (syncfs, renameat2, O_TMPFILE).
        .systemLibrary(name: "CSyscalls"),
        // What an app imports: every layer, re-exported (`PkgKit.swift`), so `import PkgKit` is
        // still the one line it writes.
        .target(
            name: "PkgKit",
            dependencies: pkgKitLayers.map { .target(name: "PkgKit" + $0.name) },
            exclude: ["README.md", "Delivery"] + pkgKitLayers.map(\.folder).filter { !$0.contains("/") }),
    ] + pkgKitLayers.map { layer in
        .target(
            name: "PkgKit" + layer.name,
            dependencies: layer.mayUse.map { .target(name: "PkgKit" + $0) } + (layerImports[layer.name] ?? []),
            path: "Sources/PkgKit/" + layer.folder)
    } + [
        .target(
            name: "PkgKitArchive",
            dependencies: ["PkgKit", "CArchive", .product(name: "Crypto", package: "swift-crypto")]),
        .executableTarget(
            name: "pkgtool",
            dependencies: [
                "PkgKit", "PkgKitArchive", "CSyscalls",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),
        // `bench/transport.sh`: one download through one of PkgKit's HTTP transports.
        .executableTarget(name: "transportbench", dependencies: ["PkgKit"], path: "bench/transportbench"),
        // An app's-eye view of PkgKit: a program that depends on the PkgKit library alone, built
        // with everything else; `PortabilityTests` runs it and reads what it links.
        .executableTarget(name: "portability-check", dependencies: ["PkgKit"], path: "Tests/Portability"),
        // An app's use of PkgKit as the docs show it (URLs, the progress sequence on the main actor,
        // cancel and resume): public API only, built with everything else; `ExampleAppTests` runs it.
        .executableTarget(name: "pkgkit-example", dependencies: ["PkgKit"], path: "Examples/pkgkit-example"),
        // libFuzzer harness over readers + rules (`make fuzz`); a plain build replays inputs.
        .executableTarget(name: "pkgfuzz", dependencies: ["PkgKit", "PkgKitArchive", .product(name: "Crypto", package: "swift-crypto")]),
        // What every test target shares: scratch folders, running the built binary, crafting xar.
        .target(
            name: "TestSupport",
            dependencies: ["PkgKit", "PkgKitArchive", "CZlib", "CSyscalls", .product(name: "Crypto", package: "swift-crypto")],
            path: "Tests/Support"),
        // The chaos soak of `pkgtool sync` (`make soak`); the work is `Soak` in TestSupport.
        .executableTarget(name: "pkgsoak", dependencies: ["TestSupport"], path: "Tests/Soak"),
        .testTarget(
            name: "PkgKitTests",
            dependencies: [
                "PkgKit", "PkgKitArchive", "TestSupport", "CZlib", .product(name: "Crypto", package: "swift-crypto"),
                // The HTTP client's and TLS library's errors, to check the words the transport gives them;
                // an embedded channel, to drive the transport's read gate.
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(platforms: [.linux])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(platforms: [.linux])),
                .product(name: "NIOEmbedded", package: "swift-nio", condition: .when(platforms: [.linux])),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(platforms: [.linux])),
            ]),
        .testTarget(
            name: "pkgtoolTests",
            dependencies: ["pkgtool", "PkgKit", "TestSupport", "CZlib", .product(name: "Crypto", package: "swift-crypto")]),
    ],
    swiftLanguageModes: [.v6]
)

// Every file imports the modules whose declarations it uses, members of their extensions included,
// so an import a file needs, or one it no longer needs, is plain to see.
for target in package.targets where target.type != .system {
    target.swiftSettings = (target.swiftSettings ?? []) + [.enableUpcomingFeature("MemberImportVisibility")]
}
