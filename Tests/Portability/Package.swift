// swift-tools-version:6.0
// An app's-eye view of PkgKit: a small executable that depends on the `PkgKit` product alone.
// `PortabilityTests` builds it, installs a package with it, and checks that libarchive is not linked.
import PackageDescription

let package = Package(
    name: "portability-check",
    platforms: [.macOS(.v13)],
    dependencies: [.package(name: "pkgtool", path: "../..")],
    targets: [
        .executableTarget(name: "portability-check", dependencies: [.product(name: "PkgKit", package: "pkgtool")]),
    ]
)
