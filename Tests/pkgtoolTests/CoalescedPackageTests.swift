import Foundation
import PkgKit
import Testing
import TestSupport

/// Identical files in one package share their bytes (`HeapCoalescing`): each copy's TOC entry
/// points at the first copy's data, so every device downloads it once. bsdtar, validate,
/// extract and sync read such a package as any other; `--no-coalesce` stores every copy.
@Suite(.offThePool, .timeLimit(.minutes(2))) struct CoalescedPackageTests {
    static let id = "com.example.coalesce"
    let scratch: Scratch
    let text = compressibleText(300_000, seed: 31)
    /// Over 4 MiB, so chunked and streamed rather than compressed in one call.
    let large = compressibleText(5 << 20, seed: 32)
    let noise = pseudoRandomData(200_000, seed: 33)

    init() throws { scratch = try Scratch() }

    /// Three copies of `text`, two of `large`, two of `noise` (stored, as it does not shrink),
    /// and files of the same sizes with other bytes.
    var files: [String: Data] {
        var sameSize = text
        sameSize[1000] ^= 0xFF
        return ["a/text.txt": text, "b/text.txt": text, "c/d/text copy.txt": text, "text-other.txt": sameSize,
                "levels/1.dat": large, "levels/2.dat": large, "noise.bin": noise, "z/noise.bin": noise,
                "noise-other.bin": pseudoRandomData(200_000, seed: 34), "empty-1": Data(), "empty-2": Data()]
    }

    /// Where a file's stored bytes are in the heap.
    struct Place: Equatable {
        var offset: Int64
        var length: Int64
    }

    func place(_ toc: XarTableOfContents, _ path: String) throws -> Place {
        let entry = try #require(toc.entry("Contents/" + path), "\(path)")
        return Place(offset: try #require(entry.offset), length: try #require(entry.length))
    }

    @Test func identicalFilesShareOneCopyOfTheirBytes() throws {
        let shared = try scratch.package("shared", id: Self.id, version: "1.0", files: files)
        let separate = try scratch.package("separate", id: Self.id, version: "1.0", files: files, extraArguments: ["--no-coalesce"])
        let toc = try XarTableOfContents.read(shared.pkg)
        for group in [["a/text.txt", "b/text.txt", "c/d/text copy.txt"], ["levels/1.dat", "levels/2.dat"], ["noise.bin", "z/noise.bin"]] {
            let first = try place(toc, group[0])
            for other in group.dropFirst() { #expect(try place(toc, other) == first, "\(other) against \(group[0])") }
        }
        // The chunk table travels with every copy, so sync can fetch any of them in parts.
        #expect(toc.entry("Contents/levels/2.dat")?.chunks == toc.entry("Contents/levels/1.dat")?.chunks)
        #expect(toc.entry("Contents/levels/2.dat")?.chunks != nil)
        // The same size with other bytes is no copy.
        #expect(try place(toc, "text-other.txt") != place(toc, "a/text.txt"))
        #expect(try place(toc, "noise-other.bin") != place(toc, "noise.bin"))
        // Without coalescing every file has bytes of its own, and the package holds every copy.
        let separateTOC = try XarTableOfContents.read(separate.pkg)
        let offsets = separateTOC.entries.compactMap { $0.length ?? 0 > 0 ? $0.offset : nil }
        #expect(Set(offsets).count == offsets.count)
        let saved = try size(separate.pkg) - size(shared.pkg)
        let copies = try place(toc, "a/text.txt").length * 2 + place(toc, "levels/1.dat").length + place(toc, "noise.bin").length
        // Give or take the TOC, which compresses a little better when its entries repeat.
        #expect(abs(saved - copies) < 4096, "saved \(saved), copies hold \(copies)")
    }

    @Test func bsdtarValidateAndExtractReadEveryCopy() async throws {
        let shared = try scratch.package("p", id: Self.id, version: "1.0", files: files)
        _ = try await CommandRunner.shell("mkdir x && bsdtar -xf p.pkg -C x && diff -r x/Contents src-p/Contents", in: scratch.url)
        let validate = try await CommandRunner.pkgtool(["validate", shared.pkg])
        #expect(validate.status == 0, "\(validate.stdout)\(validate.stderr)")
        let extract = try await CommandRunner.pkgtool(["extract", shared.pkg, "--documents", scratch.documents])
        #expect(extract.status == 0, "\(extract.stdout)\(extract.stderr)")
        #expect(differences(scratch.documents + "/\(Self.id)/1.0", expected: snapshot(shared.contents)).isEmpty)
    }

    /// Which copy is stored is decided in package order, whichever thread hashed first.
    @Test func theSameBytesForEveryJobCount() throws {
        let one = try scratch.package("one", id: Self.id, version: "1.0", files: files, extraArguments: ["--jobs", "1"])
        for jobs in ["2", "4"] {
            let many = try scratch.package("j\(jobs)", id: Self.id, version: "1.0", files: files, extraArguments: ["--jobs", jobs])
            #expect(try Data(contentsOf: URL(fileURLWithPath: one.pkg)) == Data(contentsOf: URL(fileURLWithPath: many.pkg)), "--jobs \(jobs)")
        }
    }

    /// A full download installs every copy; an update whose new copies share bytes with each
    /// other, and one whose copy is of a file already installed, install the same tree as a
    /// full download would.
    @Test func syncInstallsEveryCopyInFullAndAsADelta() async throws {
        let published = scratch.path("pub")
        let v10 = try scratch.package("v10", id: Self.id, version: "1.0", files: files)
        var next = files
        let fresh = compressibleText(250_000, seed: 35)
        next["new/one.txt"] = fresh
        next["new/two.txt"] = fresh
        next["new/text again.txt"] = text
        let v11 = try scratch.package("v11", id: Self.id, version: "1.1", files: next)
        #expect(try await CommandRunner.pkgtool(["publish", v10.pkg, "--to", published]).status == 0)
        let nginx = try NginxServer(root: published)
        defer { nginx.stop() }
        let catalog = nginx.url("catalog.json").absoluteString
        let first = try await CommandRunner.pkgtool(["sync", catalog, "--product", Self.id, "--documents", scratch.documents, "--json"])
        #expect(first.status == 0, "\(first.stdout)\(first.stderr)")
        let folder = scratch.documents + "/" + Self.id
        #expect(differences(folder + "/1.0", expected: snapshot(v10.contents)).isEmpty)
        #expect(try await CommandRunner.pkgtool(["publish", v11.pkg, "--to", published]).status == 0)
        let check = try await CommandRunner.pkgtool(["sync", catalog, "--check", "--documents", scratch.documents, "--json"])
        let checked = (check.json["products"] as? [[String: Any]])?.first?["bytesToDownload"] as? Int
        let before = nginx.log(atLeast: 1).count
        let second = try await CommandRunner.pkgtool(["sync", catalog, "--documents", scratch.documents, "--json"])
        #expect(second.status == 0, "\(second.stdout)\(second.stderr)")
        let product = (second.json["products"] as? [[String: Any]])?.first ?? [:]
        #expect(product["delta"] as? Bool == true, "\(product)")
        #expect(differences(folder + "/1.1", expected: snapshot(v11.contents)).isEmpty)
        #expect(readRecord(folder)?.version == "1.1")
        // The new file's bytes came once, not twice; the copy of an installed file not at all.
        let fetched = nginx.log(atLeast: before + 1).dropFirst(before).filter { $0.path.hasSuffix("/1.1.pkg") }.reduce(0) { $0 + $1.bodyBytesSent }
        let stored = try place(try XarTableOfContents.read(v11.pkg), "new/one.txt").length
        #expect(Int64(fetched) < stored * 2, "fetched \(fetched) for a file stored in \(stored)")
        #expect(checked == fetched, "sync --check said \(String(describing: checked)), sync fetched \(fetched)")
    }

    private func size(_ path: String) throws -> Int64 {
        Int64(try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int))
    }
}
