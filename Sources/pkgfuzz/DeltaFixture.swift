import Foundation
import PkgKit

/// The two versions the delta target syncs between, made once per process with pkgtool's own
/// writer: 1.0 is installed before every input, 1.1 is what the server publishes. 1.1 keeps a
/// page, changes a small binary file, edits the middle of a large text file (written with a
/// chunk table, so that a delta fetches only the chunks that changed) and adds a page, so that a
/// sync from 1.0 reuses files, assembles chunks and fetches ranges. Its package is over the size
/// below which sync downloads whole.
struct DeltaFixture {
    /// The product both versions belong to.
    static let productIdentifier = "com.example.fuzz"

    /// The 1.0 package.
    var previousPackage: String
    /// The 1.1 package as pkgtool wrote it, taken apart.
    var latest: XarAssembly
    /// 1.0's installed folder.
    var previousTree: InstalledSnapshot
    /// 1.1's TOC with the checksums of `changing.bin` left out (as other writers may write it):
    /// a delta must not take that file's bytes from a range unverified.
    var latestWithoutChecksum: [UInt8]

    /// Builds both versions under `folder`.
    init(folder: String) throws {
        let fm = FileManager.default
        try? fm.removeItem(atPath: folder)
        try fm.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var random = SplitMix(seed: 38)
        let text = Self.text(count: 1_400_000, using: &random)
        var edited = text
        edited.replaceSubrange(700_000 ..< 700_040, with: Array("edited in the middle for version 1.1 ...".utf8))
        let v10: [String: [UInt8]] = [
            "Contents/pages/kept.txt": Array(String(repeating: "a page that no version changes\n", count: 30).utf8),
            "Contents/data/changing.bin": random.bytes(6_000),
            "Contents/media/large.txt": text,
        ]
        var v11 = v10
        v11["Contents/data/changing.bin"] = random.bytes(6_000)
        v11["Contents/media/large.txt"] = edited
        v11["Contents/pages/new.txt"] = Array(String(repeating: "new in 1.1\n", count: 20).utf8)
        previousPackage = try Self.make(v10, version: "1.0", in: folder)
        let latestPackage = try Self.make(v11, version: "1.1", in: folder)
        guard let latest = XarAssembly(package: Array(try Data(contentsOf: URL(fileURLWithPath: latestPackage)))) else {
            throw FixtureError("pkgtool's own 1.1 package does not take apart")
        }
        self.latest = latest
        let documents = folder + "/reference"
        _ = try Installer(documents: documents).install(previousPackage)
        guard let tree = InstalledSnapshot(documents + "/" + Self.productIdentifier + "/1.0") else { throw FixtureError("1.0 did not install") }
        previousTree = tree
        latestWithoutChecksum = Self.removingChecksums(of: "changing.bin", from: latest.toc)
        guard latestWithoutChecksum != latest.toc else { throw FixtureError("no checksum of changing.bin in 1.1's TOC") }
    }

    /// The package of `files` at `version`, written with level 1, whose writer chunks files from
    /// 1 MiB on.
    private static func make(_ files: [String: [UInt8]], version: String, in folder: String) throws -> String {
        let source = folder + "/source-" + version
        for (path, bytes) in files {
            let file = source + "/" + path
            try FileManager.default.createDirectory(atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try Data(bytes).write(to: URL(fileURLWithPath: file))
        }
        let plist = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0"><dict><key>IAPProductIdentifier</key><string>\(productIdentifier)</string>\
            <key>ContentVersion</key><string>\(version)</string></dict></plist>

            """
        try Data(plist.utf8).write(to: URL(fileURLWithPath: source + "/ContentInfo.plist"))
        let output = folder + "/" + version + ".pkg"
        _ = try PackageCreator.create(CreateRequest(source: source, output: output, options: WriteOptions(level: 1)))
        try? FileManager.default.removeItem(atPath: source)
        return output
    }

    /// `toc` without the `<archived-checksum>` and `<extracted-checksum>` of the file named `name`.
    static func removingChecksums(of name: String, from toc: [UInt8]) -> [UInt8] {
        var text = String(decoding: toc, as: UTF8.self)
        guard let named = text.range(of: "<name>\(name)</name>"), let end = text.range(of: "</file>", range: named.upperBound ..< text.endIndex) else {
            return toc
        }
        var element = String(text[named.lowerBound ..< end.lowerBound])
        for tag in ["archived-checksum", "extracted-checksum"] {
            while let open = element.range(of: "<\(tag)"), let close = element.range(of: "</\(tag)>", range: open.upperBound ..< element.endIndex) {
                element.removeSubrange(open.lowerBound ..< close.upperBound)
            }
        }
        text.replaceSubrange(named.lowerBound ..< end.lowerBound, with: element)
        return Array(text.utf8)
    }

    /// Words at random: text that compresses as text does.
    private static func text(count: Int, using random: inout SplitMix) -> [UInt8] {
        let words = ["content", "package", "chapter", "page", "river", "delta", "range", "chunk", "table", "server"].map { Array($0.utf8) }
        var out: [UInt8] = []
        out.reserveCapacity(count + 16)
        while out.count < count {
            out += words[Int(random.next() % UInt64(words.count))]
            out.append(random.next() % 12 == 0 ? 0x0A : 0x20)
        }
        return Array(out.prefix(count))
    }
}

/// The fixture could not be made: pkgtool's own writer or installer failed.
struct FixtureError: Error, CustomStringConvertible {
    /// What failed.
    var description: String

    /// An error saying `description`.
    init(_ description: String) { self.description = description }
}

/// A small deterministic generator (SplitMix64), so that every process builds the same fixture
/// and kept inputs keep meaning the same bytes.
struct SplitMix {
    private var state: UInt64

    /// A generator whose numbers follow from `seed`.
    init(seed: UInt64) { state = seed }

    /// The next number.
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// `count` random bytes.
    mutating func bytes(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8(truncatingIfNeeded: next()) }
    }
}
