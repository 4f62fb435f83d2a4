// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "pkgtool",
    platforms: [.macOS(.v13)],
    products: [
        .library(name: "PkgKit", targets: ["PkgKit"]),
        .executable(name: "pkgtool", targets: ["pkgtool"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-asn1", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
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
        // Linux calls Glibc's Swift module leaves out (syncfs, renameat2, O_TMPFILE).
        .systemLibrary(name: "CSyscalls"),
        .target(
            name: "PkgKit",
            dependencies: [
                "CArchive", "CXML2", "CZlib", "CSyscalls",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ]),
        .executableTarget(
            name: "pkgtool",
            dependencies: [
                "PkgKit", "CSyscalls",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),
        // libFuzzer harness over readers + rules (`make fuzz`); a plain build replays inputs.
        .executableTarget(name: "pkgfuzz", dependencies: ["PkgKit"]),
        // What every test target shares: test servers (a fault-injecting HTTP server, nginx).
        .target(
            name: "TestSupport",
            path: "Tests/Support",
            swiftSettings: [.swiftLanguageMode(.v6)]),
        .testTarget(
            name: "PkgKitTests",
            dependencies: ["PkgKit", "TestSupport", "CZlib", .product(name: "Crypto", package: "swift-crypto")]),
        .testTarget(
            name: "pkgtoolTests",
            dependencies: ["pkgtool", "PkgKit", "TestSupport", "CZlib", .product(name: "Crypto", package: "swift-crypto")]),
    ],
    // Strict Swift 6 concurrency checking buys little in a tool whose parallelism is one
    // worker pool in the writer; the v5 mode keeps C interop readable.
    swiftLanguageModes: [.v5]
)
