import Foundation

/// One version of the soak's product: its package, as published, and what it installs.
struct SoakVersion {
    /// The ContentVersion, e.g. `1.3`.
    var version: String
    /// The package's size in bytes (its catalog entry's `size`).
    var size: Int
    /// The tree a reference `pkgtool extract` of the package installed.
    var reference: [String: TreeEntry]
    /// Files stored uncompressed whose checksums were left out of the package's TOC: their
    /// names, and where each one's data starts in the package.
    var withoutChecksums: [(name: String, offset: Int)] = []
    /// Whether it was written at level 1, where files from 1 MiB on get chunk tables (at the
    /// default level, only those over 4 MiB).
    var fastLevel = false
}

/// The product whose versions the soak publishes as it goes (1.0, 1.1, 1.2, …), each made with
/// `pkgtool create`, published with `pkgtool publish`, and extracted once into a reference
/// folder. Each version changes a few files of the one before; its size class (small, medium,
/// a few MB) is drawn at random, so that updates come as deltas and as full downloads, and
/// interrupts land in the middle of long bodies. Large versions hold files with chunk tables
/// whose middle changes, so that deltas fetch chunks; some versions leave the checksums of two
/// changed files out of their TOC, as other writers may.
final class SoakProduct {
    /// The product identifier.
    static let identifier = "com.example.soak"

    /// The published folder the server serves.
    let published: String
    /// Every version published so far, oldest first.
    private(set) var versions: [SoakVersion] = []

    private let pkgtool: String
    private let work: String
    private var random: SeededRandom
    private var files: [String: Data] = [:]
    /// The names of the small files the last `evolve` changed or added.
    private var changed: [String] = []
    /// The size class of the last version.
    private var lastSize = SoakSize.small

    /// Whether each package is altered once published (see `SoakOptions.publisherAlters`).
    private let alters: Bool

    /// A product not yet published, whose packages and sources go under `work`; with `alters`,
    /// each package is altered once published, its catalog entry rewritten to match.
    init(pkgtool: String, work: String, random: SeededRandom, alters: Bool = false) throws {
        self.pkgtool = pkgtool
        self.alters = alters
        self.work = work
        self.random = random
        published = work + "/published"
        try FileManager.default.createDirectory(atPath: published, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: work + "/packages", withIntermediateDirectories: true)
        for index in 0..<6 {
            files["pages/p\(index).txt"] = Data(String(repeating: "page \(index) of the soak's product\n", count: 40).utf8)
        }
    }

    /// The newest version published.
    var latest: SoakVersion? { versions.last }

    /// Where the data of stored files without checksums starts, by the URL path of their package.
    var unverifiedData: [String: [Int]] {
        var offsets: [String: [Int]] = [:]
        for version in versions where !version.withoutChecksums.isEmpty {
            offsets["/\(Self.identifier)/\(version.version).pkg"] = version.withoutChecksums.map(\.offset)
        }
        return offsets
    }

    /// The version named `version`, when it was published.
    func version(_ version: String) -> SoakVersion? { versions.first { $0.version == version } }

    /// Makes, checks and publishes the next version.
    func publishNext() throws {
        let index = versions.count
        let version = "1.\(index)"
        evolve(index)
        let source = work + "/src-" + version
        for (path, data) in files {
            let file = source + "/Contents/" + path
            try FileManager.default.createDirectory(atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try data.write(to: URL(fileURLWithPath: file))
        }
        try Data(plist(id: Self.identifier, version: version).utf8).write(to: URL(fileURLWithPath: source + "/ContentInfo.plist"))
        let package = work + "/packages/" + version + ".pkg"
        let fastLevel = random.chance(0.5)
        try run(["create", source, "-o", package] + (fastLevel ? ["--level", "1"] : []))
        // The files this version changed, all fetched by a delta (the pages by ranges of their
        // own once large files come before them in the heap).
        let withoutChecksums = random.chance(0.5) || alters ? try SoakChecksumRemoval.strip(changed, inPackageAt: package) : []
        let reference = work + "/reference-" + version
        try run(["extract", package, "--documents", reference])
        let tree = snapshot(reference + "/" + Self.identifier + "/" + version)
        // The tree is kept in memory; the folders are not needed again.
        try? FileManager.default.removeItem(atPath: reference)
        try? FileManager.default.removeItem(atPath: source)
        try run(["publish", package, "--to", published])
        if alters, let file = withoutChecksums.first { try alterPublished(version, at: file.offset) }
        let size = (try FileManager.default.attributesOfItem(atPath: package)[.size] as? NSNumber)?.intValue ?? 0
        versions.append(SoakVersion(version: version, size: size, reference: tree, withoutChecksums: withoutChecksums, fastLevel: fastLevel))
    }

    /// Inverts the byte at `offset` of the published package of `version` and puts its new sha256
    /// in the catalog (its TOC, and so its `tocSHA256`, are as they were): a package that a sync
    /// without `--trust` cannot tell from the one published, and that is not the reference.
    private func alterPublished(_ version: String, at offset: Int) throws {
        let path = published + "/" + Self.identifier + "/" + version + ".pkg"
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let before = sha256Hex(bytes)
        bytes[offset] ^= 0xFF
        try bytes.write(to: URL(fileURLWithPath: path), options: .atomic)
        let catalog = published + "/catalog.json"
        let text = try String(contentsOfFile: catalog, encoding: .utf8)
        try text.replacingOccurrences(of: before, with: sha256Hex(bytes)).write(toFile: catalog, atomically: true, encoding: .utf8)
    }

    /// Changes the files for version `index`: one changed file, one page edited, one added, one
    /// sometimes removed, and the large files of its size class (kept from the version before
    /// when it had them, so that a delta reuses them).
    private func evolve(_ index: Int) {
        // The first three give every kind early; then at random, the class of the version before
        // kept half the time, so that large versions follow one another and update by chunks.
        let size: SoakSize = index < 3 ? [.small, .medium, .large][index]
            : random.chance(0.5) ? lastSize : random.weighted([(.small, 0.35), (.medium, 0.45), (.large, 0.2)])
        lastSize = size
        files["data/changing.bin"] = random.data(Int.random(in: 4_096...16_384, using: &random))
        let pages = files.keys.filter { $0.hasPrefix("pages/") }.sorted()
        changed = ["changing.bin", "new-\(index).txt"]
        if let page = pages.randomElement(using: &random) {
            files[page]?.append(Data("edited for 1.\(index)\n".utf8))
            changed.append(String(page.dropFirst("pages/".count)))
        }
        files["pages/new-\(index).txt"] = Data(String(repeating: "new in 1.\(index)\n", count: 20).utf8)
        if pages.count > 4, random.chance(0.3), let gone = pages.randomElement(using: &random) { files[gone] = nil }
        switch size {
        case .small:
            files["media/blob.bin"] = nil
            files["media/large.bin"] = nil
            files["media/text.txt"] = nil
        case .medium:
            if files["media/blob.bin"] == nil { files["media/blob.bin"] = random.data(Int.random(in: 200_000...400_000, using: &random)) }
            files["media/large.bin"] = nil
            files["media/text.txt"] = nil
        case .large:
            // Over 4 MiB: cut into chunks at any level. Its middle changes now and then, and the
            // text's middle every time, so that a delta fetches the chunks that changed.
            if files["media/large.bin"] == nil {
                files["media/large.bin"] = random.data(Int.random(in: 4_400_000...5_000_000, using: &random))
            } else if random.chance(0.5), let count = files["media/large.bin"]?.count {
                let at = Int.random(in: count / 4 ... count / 2, using: &random)
                files["media/large.bin"]?.replaceSubrange(at ..< at + 4_096, with: random.data(4_096))
            }
            if files["media/text.txt"] == nil {
                files["media/text.txt"] = compressibleText(Int.random(in: 1_100_000...1_500_000, using: &random), seed: random.next())
            }
            if let count = files["media/text.txt"]?.count {
                let at = Int.random(in: count / 3 ... count / 2, using: &random)
                files["media/text.txt"]?.replaceSubrange(at ..< at + 64, with: Data("edited for 1.\(index) ".padding(toLength: 64, withPad: "~", startingAt: 0).utf8))
            }
        }
    }

    private func run(_ arguments: [String]) throws {
        let result = try CommandRunner.run(pkgtool, arguments)
        guard result.status == 0 else {
            throw CommandRunner.ShellError(command: "pkgtool " + arguments.joined(separator: " "), stderr: result.stdout + result.stderr)
        }
    }
}

/// How large a version of the soak's product is: a few pages, a few hundred kB more, or a few
/// MB more in files with chunk tables.
private enum SoakSize { case small, medium, large }

extension SeededRandom {
    /// `count` random bytes: content that does not compress.
    mutating func data(_ count: Int) -> Data {
        var bytes = [UInt8]()
        bytes.reserveCapacity(count + 8)
        while bytes.count < count {
            let word = next()
            for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: word >> UInt64(shift))) }
        }
        let data = Data(bytes.prefix(count))
        return data
    }
}
