import Foundation
import Testing
import TestSupport

/// The README's nginx server block, as a user would paste it: nginx started with it on loopback
/// (its port and folder substituted), serving a folder `pkgtool publish` wrote, through which
/// `pkgtool sync` installs, with the caching headers the README promises.
@Suite(.offThePool, .serialized, .timeLimit(.minutes(2))) struct ReadmeNginxTests {
    /// The first ```nginx block of README.md.
    static func serverBlock() throws -> String {
        let readme = try String(contentsOfFile: CommandRunner.packageRoot.appendingPathComponent("README.md").path, encoding: .utf8)
        let start = try #require(readme.range(of: "```nginx\n"), "README.md has no nginx block")
        let end = try #require(readme.range(of: "\n```", range: start.upperBound..<readme.endIndex))
        return String(readme[start.upperBound..<end.lowerBound])
    }

    @Test(.enabled(if: NginxServer.isAvailable, "nginx is not installed: run `make deps`"))
    func theReadmesServerBlockServesAPublishedFolderThatSyncInstallsFrom() throws {
        let block = try Self.serverBlock()
        #expect(block.hasPrefix("server {"), "a complete server block")
        #expect(block.contains("listen 80;") && block.contains("root /srv/pkgtool;"), "the lines this test substitutes")
        #expect(!block.contains("alias"), "root, not alias")

        let scratch = try Scratch()
        let served = scratch.path("srv/pkgtool")
        let package = try scratch.package("book", id: "com.example.book.chapter1", version: "1.0",
                                          text: ["chapter1.txt": "Chapter one.\n", "art/cover.txt": "cover\n"])
        let key = scratch.path("keys/release-key")
        let keygen = try CommandRunner.pkgtool(["keygen", "--out", key])
        #expect(keygen.status == 0, "\(keygen.stderr)")
        let publish = try CommandRunner.pkgtool(["publish", package, "--to", served + "/content", "--sign", key + ".pem"])
        #expect(publish.status == 0, "\(publish.stderr)")

        let nginx = try NginxServer(root: served) { port in
            block.replacingOccurrences(of: "listen 80;", with: "listen 127.0.0.1:\(port);")
                .replacingOccurrences(of: "/srv/pkgtool", with: served)
        }
        defer { nginx.stop() }

        let documents = scratch.documents
        let sync = try CommandRunner.pkgtool(["sync", nginx.url("content/").absoluteString, "--documents", documents,
                                              "--product", "com.example.book.chapter1", "--trust", key + ".pub.pem"])
        #expect(sync.status == 0, "\(sync.stdout)\(sync.stderr)")
        #expect(sync.stdout.hasPrefix("installed com.example.book.chapter1 1.0"), "\(sync.stdout)")
        let installed = documents + "/com.example.book.chapter1/1.0/"
        #expect(FileManager.default.contents(atPath: installed + "chapter1.txt") == Data("Chapter one.\n".utf8))
        #expect(FileManager.default.contents(atPath: installed + "art/cover.txt") == Data("cover\n".utf8))
        #expect(nginx.log().contains { $0.path == "/content/catalog.json" && $0.status == 200 })

        // What the README says each kind of file is cached for.
        let catalog = try Self.headers(nginx.url("content/catalog.json"))
        #expect(catalog.contains("cache-control: no-cache"), "\(catalog)")
        let pkg = try Self.headers(nginx.url("content/com.example.book.chapter1/1.0.pkg"))
        #expect(pkg.contains("cache-control: public, max-age=31536000, immutable"), "\(pkg)")
        #expect(pkg.contains("http/1.1 200"), "\(pkg)")
    }

    /// The response head of a HEAD request to `url`, lowercased.
    static func headers(_ url: URL) throws -> String {
        let curl = try CommandRunner.run("/usr/bin/curl", ["-sS", "-I", url.absoluteString])
        #expect(curl.status == 0, "\(curl.stderr)")
        return curl.stdout.lowercased().replacingOccurrences(of: "\r", with: "")
    }
}
