import Foundation
import PkgKit

/// The delta target: a sync from 1.0 to 1.1 against `HostileServer`, whose 1.1 TOC (chunk
/// tables included) and range bodies come from the fuzzer. The catalog is honest about the TOC
/// it is given (its `tocSHA256` and `sha256` are the assembled package's): the fuzzer plays a
/// publisher whose tables may be anything, and a server between it and the client.
///
/// An input is a byte that picks the TOC (even: one of the fixture's, pkgtool's own TOC of 1.1
/// or the same without a checksum for one changed file; odd: the XML after the script), a byte
/// that says how many instructions follow (at most 16), the instructions (4 bytes each, see
/// `HostileServer.Instruction`), then the TOC's XML when the first byte asks for it. Inputs
/// that keep a fixture TOC are a few bytes long, so that mutations land on the script.
/// The oracle (`DeltaOracle`): every installed byte equals a whole install of the published
/// package, or nothing is installed and 1.0 is intact.
final class DeltaTarget {
    /// The most instructions read.
    static let maximumInstructions = 16

    private let work: String
    private let fixture: DeltaFixture
    private let previousBytes: Data
    /// 1.0's catalog entry.
    private let previousEntry: CatalogVersion
    /// Whole installs of 1.1 by TOC (nil: refused), for the last 64 TOCs met.
    private var references: [[UInt8]: InstalledSnapshot?] = [:]

    /// A target working in `work`, its fixture made there.
    init(work: String) throws {
        self.work = work
        fixture = try DeltaFixture(folder: work + "/fixture")
        previousBytes = try Data(contentsOf: URL(fileURLWithPath: fixture.previousPackage))
        let digest = try PackageDigest.compute(fixture.previousPackage, xar: true)
        previousEntry = CatalogVersion(contentVersion: ContentVersion("1.0")!, url: "\(DeltaFixture.productIdentifier)/1.0.pkg", size: digest.size,
                                       sha256: digest.sha256, tocSHA256: digest.tocSHA256, fileCount: 3, payloadBytes: 1_500_000)
    }

    /// The seeds: pkgtool's TOC and the same without a checksum for one changed file, each
    /// alone and with instructions of every kind; each a different road through the delta path.
    func seeds() -> [String: [UInt8]] {
        typealias I = HostileServer.Instruction
        func input(_ toc: UInt8, _ script: [UInt8], _ xml: [UInt8] = []) -> [UInt8] { [toc, UInt8(script.count / 4)] + script + xml }
        var seeds = ["delta-toc-xml": input(1, [], fixture.latest.toc), "delta-toc-xml-no-checksum": input(1, [], fixture.latestWithoutChecksum)]
        for (name, toc) in [("", UInt8(0)), ("no-checksum-", 2)] {
            seeds["delta-\(name)plain"] = input(toc, [])
            for fault in HostileServer.Fault.allCases {
                seeds["delta-\(name)\(fault)"] = input(toc, I.encode(request: 0, fault, parameter: 0x8000) + I.encode(request: 1, fault, parameter: 0x4000))
            }
        }
        return seeds
    }

    /// Runs one input; what the sync did, in words, for a replay to print.
    @discardableResult
    func run(_ input: [UInt8]) -> String {
        guard input.count >= 2 else { return "too short" }
        let count = min(Int(input[1]), Self.maximumInstructions)
        let script = Array(input.dropFirst(2).prefix(4 * count))
        let instructions = stride(from: 0, to: script.count - 3, by: 4).map { HostileServer.Instruction(script[$0 ..< $0 + 4]) }
        let toc = input[0] % 2 == 1 ? Array(input.dropFirst(2 + script.count))
            : input[0] / 2 % 2 == 0 ? fixture.latest.toc : fixture.latestWithoutChecksum
        let package = Data(XarAssembly(toc: toc, heap: fixture.latest.heap).bytes)
        let packagePath = work + "/latest.pkg"
        guard FileManager.default.createFile(atPath: packagePath, contents: package),
              let digest = try? PackageDigest.compute(packagePath, xar: true) else { return "not written" }
        let reference = reference(toc: toc, package: packagePath)
        let documents = work + "/Documents"
        try? FileManager.default.removeItem(atPath: documents)
        guard (try? Installer(documents: documents).install(fixture.previousPackage))?.status == .installed else {
            FuzzTarget.fail("delta target: its 1.0 no longer installs")
        }
        let id = DeltaFixture.productIdentifier
        let latestEntry = CatalogVersion(contentVersion: ContentVersion("1.1")!, url: "\(id)/1.1.pkg", size: digest.size,
                                         sha256: digest.sha256, tocSHA256: digest.tocSHA256, fileCount: 4, payloadBytes: 2_900_000)
        let catalog = Catalog(products: [CatalogProduct(productIdentifier: id, latest: latestEntry.contentVersion,
                                                        versions: [latestEntry, previousEntry])])
        let server = HostileServer(files: ["/catalog.json": catalog.encoded(), "/\(id)/1.1.pkg": package, "/\(id)/1.0.pkg": previousBytes],
                                   latestPath: "/\(id)/1.1.pkg", script: instructions)
        let client = SyncClient(catalogURL: HostileServer.catalogURL, documents: documents, transport: server)
        let options = SyncClient.Options(products: [id], trust: .unsigned, retryPolicy: RetryPolicy(maximumAttempts: 3, initialDelay: 0, jitter: 0))
        let report = Self.wait { try await client.sync(options) }
        let problem = DeltaOracle(productFolder: documents + "/" + id, previous: fixture.previousTree, reference: reference)
            .violation(report?.products.first)
        if let problem {
            FuzzTarget.fail("delta oracle: \(problem)\n    script: \(instructions.map { "request \($0.request): \($0.fault) \($0.parameter)" })")
        }
        let product = report?.products.first
        return "\(product?.status.rawValue ?? "no report"), delta \(product?.delta ?? false), \(server.latestRequests) requests for 1.1"
            + (reference == nil ? ", whole install refused" : "") + (product?.diagnostics.first.map { ": " + $0.code.rawValue } ?? "")
    }

    /// The whole install of the package at `package` (whose TOC is `toc`), as a full download
    /// installs it; nil when it is refused.
    private func reference(toc: [UInt8], package: String) -> InstalledSnapshot? {
        if let known = references[toc] { return known }
        let documents = work + "/reference"
        try? FileManager.default.removeItem(atPath: documents)
        let options = InstallOptions(expectedProductIdentifier: DeltaFixture.productIdentifier, expectedContentVersion: "1.1")
        let report = try? Installer(documents: documents).install(package, options: options)
        let snapshot = report?.status == .installed ? InstalledSnapshot(documents + "/" + DeltaFixture.productIdentifier + "/1.1") : nil
        if references.count > 64 { references.removeAll() }
        references[toc] = snapshot
        return snapshot
    }

    /// Runs `work` to its end from a thread that is not Swift concurrency's (libFuzzer's).
    private static func wait<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) -> T? {
        let done = DispatchSemaphore(value: 0)
        let result = ResultBox<T>()
        Task {
            result.value = try? await work()
            done.signal()
        }
        done.wait()
        return result.value
    }
}

/// A value handed from a task to the thread waiting for it.
private final class ResultBox<T>: @unchecked Sendable {
    // @unchecked: written once by the task before the semaphore, read after it.
    /// The task's result, once it has ended.
    var value: T?
}
