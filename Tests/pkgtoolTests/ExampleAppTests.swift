import Foundation
import PkgKit
import Testing
import TestSupport

/// The example app (`Examples/pkgkit-example`, issue 40 item 7), built as any program linking
/// PkgKit is, run against a real nginx on loopback: a package published with a signing key is
/// installed through the public API with its progress printed to 100 %, a run cancelled in the
/// middle of its download is resumed by the next one, and a folder an older app version got from
/// SKDownload is adopted, downloading only the file that differs.
@Suite(.offThePool, .serialized, .enabled(if: NginxServer.isAvailable, "nginx is not installed: run `make deps`"), .timeLimit(.minutes(2)))
struct ExampleAppTests {
    static let id = "com.example.app.pack"
    static let binary = URL(fileURLWithPath: CommandRunner.pkgtool).deletingLastPathComponent().appendingPathComponent("pkgkit-example").path
    let scratch: Scratch
    let package: (pkg: String, contents: String)
    let published: String
    let key: String

    init() throws {
        scratch = try Scratch()
        var files: [String: Data] = ["media/level1.bin": randomData(400_000)]
        for index in 0 ..< 8 { files["text/page\(index).txt"] = Data("page \(index)\n".utf8) }
        package = try scratch.package("pack", id: Self.id, version: "1.0", files: files)
        published = scratch.path("pub")
        key = scratch.path("release")
        let made = try CommandRunner.pkgtool(["keygen", "--out", key])
        try #require(made.status == 0, "\(made.stderr)")
        let publish = try CommandRunner.pkgtool(["publish", package.pkg, "--to", published, "--sign", key + ".pem"])
        try #require(publish.status == 0, "\(publish.stdout)\(publish.stderr)")
    }

    var productFolder: String { scratch.documents + "/" + Self.id }

    /// The example on `url`'s catalog, trusting the publisher's key, with a deadline.
    func example(_ url: URL, _ arguments: [String] = []) async throws -> CommandResult {
        let command = [url.absoluteString, "--documents", scratch.documents, "--product", Self.id, "--trust", key + ".pub.pem"] + arguments
        return try await offThePool { try CommandRunner.run(Self.binary, command, deadline: .seconds(60)) }
    }

    /// The percentages of the progress lines, in order.
    func percentages(_ result: CommandResult) -> [Double] {
        result.stdout.split(separator: "\n").compactMap { line in
            let words = line.split(separator: " ")
            guard words.first == "progress", words.count > 1 else { return nil }
            return Double(words[1].dropLast())
        }
    }

    @Test func installsThePackageShowingProgressTo100Percent() async throws {
        let nginx = try NginxServer(root: published)
        defer { nginx.stop() }
        let result = try await example(nginx.url("catalog.json"))
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let shown = percentages(result)
        #expect(!shown.isEmpty && zip(shown, shown.dropFirst()).allSatisfy { $0 <= $1 }, "\(shown)")
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.last { $0.hasPrefix("progress") }?.hasPrefix("progress 100.0% finished - bytes") == true, "\(result.stdout)")
        #expect(lines.contains { $0.hasSuffix("files 9/9") && $0.contains("finished") }, "\(result.stdout)")
        #expect(lines.last == "installed \(Self.id) 1.0 downloaded \(try #require(scratch.size("pack.pkg"))) at \(productFolder)/1.0")
        #expect(differences(productFolder + "/1.0", expected: snapshot(package.contents)).isEmpty)
    }

    @Test func aCancelledRunIsResumedByTheNext() async throws {
        let size = try #require(scratch.size("pack.pkg"))
        // 100 KB/s: the first run is cancelled within its first few tenths of a second.
        let nginx = try NginxServer(root: published, limitRate: 100_000)
        defer { nginx.stop() }
        let url = nginx.url("catalog.json")
        let cancelled = try await example(url, ["--cancel-after-bytes", "60000"])
        #expect(cancelled.status == 3, "\(cancelled.stdout)\(cancelled.stderr)")
        #expect(cancelled.stdout.hasSuffix("cancelled: what was downloaded is kept, and the next run resumes it\n"))
        #expect(!cancelled.stdout.contains("100.0%"))
        let part = "Documents/\(Self.id)/.download-1.0.part"
        let kept = try #require(scratch.size(part), "the download is kept")
        try #require(kept > 0 && kept < size, "the first run was not cancelled in the middle of its download: \(kept) of \(size)")
        #expect(!exists(productFolder + "/1.0"))

        let resumed = try await example(url)
        #expect(resumed.status == 0, "\(resumed.stdout)\(resumed.stderr)")
        #expect(resumed.stdout.split(separator: "\n").last == "installed \(Self.id) 1.0 downloaded \(size - kept), resumed from \(kept) at \(productFolder)/1.0")
        #expect(percentages(resumed).last == 100)
        #expect(differences(productFolder + "/1.0", expected: snapshot(package.contents)).isEmpty)
        let ranged = nginx.log(atLeast: 1).filter { $0.path.hasSuffix("/1.0.pkg") && $0.range != nil }
        #expect(ranged.map(\.range) == ["bytes=\(kept)-"], "\(nginx.log())")
    }

    @Test func adoptsTheContentSKDownloadLeftDownloadingOnlyWhatDiffers() async throws {
        let size = try #require(scratch.size("pack.pkg"))
        // What SKDownload's contentURL held: ContentInfo.plist beside Contents/; one page was
        // changed on the device since (or damaged), the 400 KB level is intact.
        let old = scratch.path("skdownload")
        try FileManager.default.copyItem(atPath: scratch.path("src-pack"), toPath: old)
        try scratch.write("skdownload/Contents/text/page3.txt", Data("page 3, altered\n".utf8))
        let nginx = try NginxServer(root: published)
        defer { nginx.stop() }
        let result = try await example(nginx.url("catalog.json"), ["--adopt", old, "--adopt-version", "1.0"])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        let adopted = try #require(lines.first { $0.hasPrefix("adopted ") }, "\(result.stdout)")
        let downloaded = try #require(adopted.split(separator: " ").last.flatMap { Int64($0) }, "\(adopted)")
        #expect(adopted.hasPrefix("adopted installed \(Self.id) 1.0 downloaded "))
        // The catalog, its signature, the header and TOC and the one page: far from the level's 400 KB.
        #expect(downloaded < size / 4, "\(downloaded) of \(size)")
        #expect(lines.last?.hasPrefix("unchanged \(Self.id) 1.0 downloaded") == true, "\(result.stdout)")
        #expect(differences(productFolder + "/1.0", expected: snapshot(package.contents)).isEmpty)
        #expect(!exists(old), "the adopted folder is deleted once installed")
        #expect(nginx.log().filter { $0.path.hasSuffix("/1.0.pkg") }.allSatisfy { $0.range != nil }, "\(nginx.log())")
    }
}
