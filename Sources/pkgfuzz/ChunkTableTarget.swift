import Foundation
import PkgKit

/// The chunk table target: the fuzzer writes a TOC's XML (seeded with pkgtool's own TOC of a
/// package with a chunked file), put over 1.1's heap into a xar, and the delta path reads it as
/// sync does: the TOC parser, each `<chunks>` element's table, and the plan against an installed
/// 1.0 whose large files are indexed by chunk. A table the parser keeps must describe exactly its
/// file (its chunks add up to the file's size, their stored bytes fit in the file's data), and
/// no plan may ask for a byte outside the package: a hostile table is ignored, never trusted.
final class ChunkTableTarget {
    private let work: String
    private let fixture: DeltaFixture
    private let installed: InstalledTree
    private let index: ChunkIndex

    /// A target working in `work`, whose 1.0 is installed there once.
    init(work: String) throws {
        self.work = work
        fixture = try DeltaFixture(folder: work + "/fixture")
        let documents = work + "/installed"
        try? FileManager.default.removeItem(atPath: documents)
        _ = try Installer(documents: documents).install(fixture.previousPackage)
        guard let folder = try ProductFolder.open(documents: documents, identifier: DeltaFixture.productIdentifier, create: false, locking: false) else {
            throw FixtureError("1.0 is not installed")
        }
        installed = try InstalledTree.scan(folder, version: "1.0")
        let large = installed.files.filter { $0.size >= ChunkParameters.smallestChunkedFile }
            .map { ChunkIndex.Candidate(path: $0.relativePath, identity: $0.identity, needsSHA1: false) }
        index = try ChunkIndex(version: "1.0", parameters: .standard)
            .refreshed(folder, candidates: large, minimumSize: ChunkParameters.smallestChunkedFile, cancellation: nil).index
    }

    /// pkgtool's TOC of 1.1, with and without a checksum for one file.
    func seeds() -> [String: [UInt8]] {
        ["chunks-toc.xml": fixture.latest.toc, "chunks-toc-no-checksum.xml": fixture.latestWithoutChecksum]
    }

    /// Runs one input.
    func run(_ input: [UInt8]) {
        let package = XarAssembly(toc: input, heap: fixture.latest.heap).bytes
        let path = work + "/toc.pkg"
        guard FileManager.default.createFile(atPath: path, contents: Data(package)),
              let (toc, files, _) = DeltaPlan.wantedFiles(inTOCOf: path) else { return }
        let size = Int64(package.count)
        for file in files {
            guard let table = file.chunks else { continue }
            let unpacked = table.chunks.reduce(Int64(0)) { $0 + Int64($1.size) }
            let stored = table.chunks.reduce(table.dataStart) { $0 + Int64($1.storedLength) }
            guard table.count <= ChunkTable.maxChunks, unpacked == file.size, let length = file.length, stored <= length,
                  table.chunks.allSatisfy({ $0.size > 0 && $0.size <= table.parameters.maximumSize }) else {
                fail("\(file.path): kept a chunk table that does not describe its file (\(table.count) chunks, \(unpacked) bytes of \(file.size))")
            }
        }
        guard let plan = try? DeltaPlan.make(wanted: files, heapStart: toc.heapStart, packageSize: size, installed: installed, chunks: index) else { return }
        for range in plan.fetch + plan.assembled.flatMap(\.fetchRanges) where range.lowerBound < toc.heapStart || range.upperBound > size {
            fail("the plan asks for bytes \(range) of a package of \(size) whose heap starts at \(toc.heapStart)")
        }
    }

    /// Reports a broken promise and aborts: libFuzzer keeps the input.
    private func fail(_ problem: String) -> Never {
        FuzzTarget.fail("chunk table oracle: \(problem)")
    }
}
