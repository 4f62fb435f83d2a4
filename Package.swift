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
        .target(
            name: "PkgKit",
            dependencies: [
                "CArchive", "CXML2", "CZlib", "CSyscalls",
                .target(name: "CDeflate", condition: .when(platforms: [.linux])),
                .target(name: "CIsal", condition: .when(platforms: [.linux])),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]),
        .executableTarget(
            name: "pkgtool",
            dependencies: [
                "PkgKit", "CSyscalls",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),
        // libFuzzer harness over readers + rules (`make fuzz`); a plain build replays inputs.
        .executableTarget(name: "pkgfuzz", dependencies: ["PkgKit"]),
        .testTarget(
            name: "PkgKitTests",
            dependencies: ["PkgKit", "CZlib", .product(name: "Crypto", package: "swift-crypto")]),
        .testTarget(
            name: "pkgtoolTests",
            dependencies: ["pkgtool", "PkgKit", "CZlib", .product(name: "Crypto", package: "swift-crypto")]),
    ],
    // Strict Swift 6 concurrency checking buys little in a tool whose parallelism is one
    // worker pool in the writer; the v5 mode keeps C interop readable.
    swiftLanguageModes: [.v5]
)
