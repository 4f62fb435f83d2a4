import Foundation
import PkgKit
import Testing
import TestSupport

/// `pkgtool sync` over HTTPS against a real nginx on loopback, with a private CA and
/// certificates the test makes with `openssl` (never added to the machine's store), and the
/// lines a failed connection prints (issues 29 and 31): one plain line per failure, naming the
/// host and the reason and what to do, never a library's text or a build path.
@Suite(.offThePool, .serialized, .enabled(if: NginxServer.isAvailable, "nginx is not installed: run `make deps`"), .timeLimit(.minutes(2)))
struct SyncHTTPSCommandTests {
    static let id = "com.example.secure"
    let scratch: Scratch
    let certificates: TestCertificates
    let v10: (pkg: String, contents: String)
    let v11: (pkg: String, contents: String)
    let published: String

    init() throws {
        scratch = try Scratch()
        certificates = try TestCertificates(in: scratch.path("pki"))
        var files: [String: Data] = ["media/big.bin": randomData(300_000), "changing.bin": randomData(80_000)]
        for index in 0..<10 { files["pages/p\(index).txt"] = Data("page \(index)\n".utf8) }
        v10 = try scratch.package("v10", id: Self.id, version: "1.0", files: files)
        files["changing.bin"] = randomData(80_000)
        v11 = try scratch.package("v11", id: Self.id, version: "1.1", files: files)
        published = scratch.path("pub")
    }

    func publish(_ package: String) async throws {
        let result = try await CommandRunner.pkgtool(["publish", package, "--to", published])
        try #require(result.status == 0, "publish failed: \(result.stdout)\(result.stderr)")
    }

    /// `pkgtool sync URL --documents DIR --product ID ARGUMENTS`, its output checked for text
    /// that only a build or a library would write.
    func sync(_ url: URL, _ arguments: [String] = [], environment: [String: String] = [:],
              sourceLocation: SourceLocation = #_sourceLocation) async throws -> CommandResult {
        let result = try await CommandRunner.pkgtool(["sync", url.absoluteString, "--documents", scratch.documents, "--product", Self.id] + arguments,
                                                     environment: environment)
        for leak in ["/.build/", "/checkouts/", "Sources/", "errno", "BoringSSL", "NIOSSL", "HTTPClientError", "(error set)"] {
            #expect(!(result.stdout + result.stderr).contains(leak), "\(leak) in: \(result.stdout)\(result.stderr)", sourceLocation: sourceLocation)
        }
        return result
    }

    /// The one error line on stderr, or a failed expectation when there is not exactly one.
    func onlyLine(_ result: CommandResult, sourceLocation: SourceLocation = #_sourceLocation) -> String {
        let lines = result.stderr.split(separator: "\n").map(String.init)
        #expect(lines.count == 1, "\(result.stderr)", sourceLocation: sourceLocation)
        return lines.first ?? ""
    }

    /// The diagnostics of a `--json` run, everywhere they appear.
    func allDiagnostics(_ result: CommandResult) -> [[String: Any]] {
        let products = result.json["products"] as? [[String: Any]] ?? []
        return (result.json["diagnostics"] as? [[String: Any]] ?? []) + products.flatMap { $0["diagnostics"] as? [[String: Any]] ?? [] }
    }

    var productFolder: String { scratch.documents + "/" + Self.id }

    // MARK: - Trust

    @Test func anUntrustedCertificateIsOnePlainLineAndExitTwo() async throws {
        try await publish(v10.pkg)
        let nginx = try NginxServer(root: published, tls: certificates.localhost)
        defer { nginx.stop() }
        let url = nginx.url("catalog.json", host: "localhost")
        let text = try await sync(url)
        #expect(text.status == 2)
        #expect(onlyLine(text) == "error[unreadable-input] \(url.absoluteString): the certificate of localhost is not signed by an "
                + "authority this machine trusts: if it is a private CA (a staging server's), pass its certificate with --ca-cert FILE, "
                + "or install the CA in the system's trust store")
        #expect(text.stdout == "failed \(Self.id): nothing installed\n", "no retry advised: \(text.stdout)")
        #expect(!exists(productFolder))
        #expect(nginx.log().isEmpty, "no HTTP request reached the server: \(nginx.log())")

        // The JSON lists the failure once.
        let json = try await sync(url, ["--json"])
        #expect(json.status == 2)
        let diagnostics = allDiagnostics(json)
        #expect(diagnostics.count == 1, "\(json.stdout)")
        #expect(diagnostics.first?["code"] as? String == "unreadable-input")
        #expect((diagnostics.first?["message"] as? String)?.contains("--ca-cert") == true)
        #expect(json.stderr.isEmpty)
        #expect(!json.stdout.contains("transportFailure"), "the typed failure stays out of the JSON: \(json.stdout)")

        // Another CA given: still not trusted, and said so.
        let wrong = try await sync(url, ["--ca-cert", certificates.otherAuthority])
        #expect(wrong.status == 2)
        #expect(onlyLine(wrong).hasSuffix("nor by one in \(certificates.otherAuthority): check that --ca-cert names the CA that signed the server's certificate"))
    }

    @Test func caCertInstallsByteIdenticallyThenADeltaOverHTTPS() async throws {
        try await publish(v10.pkg)
        let nginx = try NginxServer(root: published, tls: certificates.localhost)
        defer { nginx.stop() }
        let url = nginx.url("catalog.json", host: "localhost")
        let first = try await sync(url, ["--ca-cert", certificates.authority, "--json"])
        #expect(first.status == 0, "\(first.stdout)\(first.stderr)")
        #expect(differences(productFolder + "/1.0", expected: snapshot(v10.contents)).isEmpty)

        try await publish(v11.pkg)
        let update = try await sync(url, ["--ca-cert", certificates.authority, "--json"])
        #expect(update.status == 0, "\(update.stdout)\(update.stderr)")
        let product = (update.json["products"] as? [[String: Any]])?.first ?? [:]
        #expect(product["delta"] as? Bool == true, "\(update.stdout)")
        #expect(differences(productFolder + "/1.1", expected: snapshot(v11.contents)).isEmpty)
        let requests = nginx.log(atLeast: 4).filter { $0.path.hasSuffix("/1.1.pkg") }
        #expect(!requests.isEmpty && requests.allSatisfy { $0.status == 206 }, "\(requests)")
    }

    /// A sync killed in the middle of a slow HTTPS download, then run again: it continues from
    /// the `.part` with a Range request.
    @Test func aDownloadResumesOverHTTPS() async throws {
        try await publish(v10.pkg)
        let nginx = try NginxServer(root: published, limitRate: 100_000, tls: certificates.localhost)
        defer { nginx.stop() }
        let url = nginx.url("catalog.json")
        let first = try BackgroundCommand(["sync", url.absoluteString, "--documents", scratch.documents, "--product", Self.id,
                                           "--ca-cert", certificates.authority], in: scratch)
        let part = "Documents/\(Self.id)/.download-1.0.part"
        let scratch = scratch
        let holdsSome = await offThePool { waitUntil { (scratch.size(part) ?? 0) >= 50_000 || !first.isRunning } }
        first.send(SIGKILL)
        let killed = await offThePool { first.finish() }
        try #require(holdsSome && killed.killedBySignal, "the sync ended before it could be killed: \(killed.result.stderr)")
        let kept = try #require(scratch.size(part))

        let result = try await sync(url, ["--ca-cert", certificates.authority, "--json"])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let product = (result.json["products"] as? [[String: Any]])?.first ?? [:]
        #expect((product["resumedFrom"] as? Int).map(Int64.init) == kept, "\(result.stdout)")
        #expect(differences(productFolder + "/1.0", expected: snapshot(v10.contents)).isEmpty)
        let resumed = nginx.log(atLeast: 2).filter { $0.path.hasSuffix("/1.0.pkg") && $0.range != nil }
        #expect(resumed.map(\.range) == ["bytes=\(kept)-"] && resumed.map(\.status) == [206], "\(nginx.log())")
    }

    /// The system's store is openssl's: `SSL_CERT_FILE` names it, as it does for curl.
    @Test func sslCertFileIsTheSystemStore() async throws {
        try await publish(v10.pkg)
        let nginx = try NginxServer(root: published, tls: certificates.localhost)
        defer { nginx.stop() }
        let result = try await sync(nginx.url("catalog.json"), environment: ["SSL_CERT_FILE": certificates.authority])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(differences(productFolder + "/1.0", expected: snapshot(v10.contents)).isEmpty)
    }

    @Test func anotherHostsCertificateListsItsNames() async throws {
        try await publish(v10.pkg)
        let nginx = try NginxServer(root: published, tls: certificates.otherHost)
        defer { nginx.stop() }
        let url = nginx.url("catalog.json")
        let result = try await sync(url, ["--ca-cert", certificates.authority])
        #expect(result.status == 2)
        #expect(onlyLine(result) == "error[unreadable-input] \(url.absoluteString): the certificate of 127.0.0.1 was issued for another host "
                + "(it holds other.example, www.other.example): use one of its names in the URL, or give the server a certificate for 127.0.0.1")
        #expect(!exists(productFolder))
    }

    @Test func anExpiredCertificateSaysToCheckTheClock() async throws {
        try await publish(v10.pkg)
        let nginx = try NginxServer(root: published, tls: certificates.expired)
        defer { nginx.stop() }
        let result = try await sync(nginx.url("catalog.json"), ["--ca-cert", certificates.authority])
        #expect(result.status == 2)
        let line = onlyLine(result)
        #expect(line.contains(": the certificate of 127.0.0.1 expired on 2020-02-01 00:00:00 UTC: renew it on the server, or if it has not expired, check this machine's clock (it says 20"), "\(line)")
        #expect(!exists(productFolder))
    }

    @Test func aHandshakeWithoutACommonProtocolOrCipherIsSaidSo() async throws {
        try await publish(v10.pkg)
        // TLS 1.1 only (OpenSSL's security level lowered so that nginx offers it at all).
        let old = try NginxServer(root: published, tls: certificates.localhost, protocols: "TLSv1.1", ciphers: "DEFAULT@SECLEVEL=0")
        defer { old.stop() }
        let result = try await sync(old.url("catalog.json"), ["--ca-cert", certificates.authority])
        #expect(result.status == 2)
        #expect(onlyLine(result).hasSuffix(": the TLS handshake with 127.0.0.1 failed: no TLS protocol version in common (this client speaks TLS 1.2 and 1.3)"))

        // TLS 1.2 with only a cipher suite this client does not offer.
        let odd = try NginxServer(root: published, tls: certificates.localhost, protocols: "TLSv1.2", ciphers: "ECDHE-ECDSA-AES256-SHA384")
        defer { odd.stop() }
        let cipher = try await sync(odd.url("catalog.json"), ["--ca-cert", certificates.authority])
        #expect(cipher.status == 2)
        #expect(onlyLine(cipher).hasSuffix(": the TLS handshake with 127.0.0.1 failed: no cipher suite in common"))

        // A plain HTTP server asked for HTTPS.
        let plain = try NginxServer(root: published)
        defer { plain.stop() }
        let https = URL(string: plain.url("catalog.json").absoluteString.replacingOccurrences(of: "http://", with: "https://"))!
        let mismatch = try await sync(https)
        #expect(mismatch.status == 2)
        #expect(onlyLine(mismatch).hasSuffix(": 127.0.0.1 did not answer in TLS: is the server on that port plain http://?"), "\(mismatch.stderr)")
    }

    @Test func anUnusableCACertFileIsNamed() async throws {
        let url = URL(string: "https://127.0.0.1:9/catalog.json")!
        let missing = scratch.path("nothere.pem")
        let unreadable = try await sync(url, ["--ca-cert", missing])
        #expect(unreadable.status == 2)
        #expect(onlyLine(unreadable) == "error[unreadable-input] \(missing): cannot read the certificate file")
        let notPEM = try await sync(url, ["--ca-cert", certificates.localhost.key])
        #expect(notPEM.status == 2)
        #expect(onlyLine(notPEM) == "error[unreadable-input] \(certificates.localhost.key): holds no PEM certificate (a -----BEGIN CERTIFICATE----- block)")
    }

    // MARK: - Connections and statuses

    @Test func aClosedPortIsOneLineAndMayBeRetried() async throws {
        let port = try closedLoopbackPort()
        let url = URL(string: "http://127.0.0.1:\(port)/catalog.json")!
        let result = try await sync(url)
        #expect(result.status == 2)
        #expect(onlyLine(result) == "error[unreadable-input] \(url.absoluteString): cannot connect to 127.0.0.1:\(port): connection refused")
        #expect(result.stdout == "failed \(Self.id): nothing installed; run sync again\n")
    }

    /// A server that never answers: the timeout's line says which option sets it, and a retry
    /// may help.
    @Test func aSilentServerTimesOutWithTheOptionNamed() async throws {
        let server = try SilentServer()
        defer { server.stop() }
        let url = server.url("catalog.json")
        let result = try await sync(url, ["--timeout", "0.2"])
        #expect(result.status == 2)
        #expect(onlyLine(result) == "error[unreadable-input] \(url.absoluteString): nothing arrived from 127.0.0.1:\(url.port ?? 0) "
                + "for too long (timed out); --timeout sets how long")
        #expect(result.stdout == "failed \(Self.id): nothing installed; run sync again\n")
    }

    @Test func aMissingCatalogNamesTheStatusAndAdvisesNoRetry() async throws {
        let empty = try scratch.mkdir("empty")
        let nginx = try NginxServer(root: empty)
        defer { nginx.stop() }
        let url = nginx.url("catalog.json")
        let result = try await sync(url)
        #expect(result.status == 2)
        #expect(onlyLine(result) == "error[unreadable-input] \(url.absoluteString): the server answered HTTP 404 (not found): "
                + "check the URL, and that the folder was published there")
        #expect(result.stdout == "failed \(Self.id): nothing installed\n")
    }

    @Test func aForbiddenPackageNamesTheStatusAndAdvisesNoRetry() async throws {
        try await publish(v10.pkg)
        let server = try FaultHTTPServer(root: published)
        defer { server.stop() }
        server.always("\(Self.id)/1.0.pkg", .status(403))
        let result = try await sync(server.url("catalog.json"))
        #expect(result.status == 2)
        let package = server.url("\(Self.id)/1.0.pkg").absoluteString
        #expect(onlyLine(result) == "error[unreadable-input] \(package): the server answered HTTP 403 (forbidden): "
                + "check the URL, and that the server lets the file be read")
        #expect(result.stdout == "failed \(Self.id) 1.0: nothing installed\n")
        #expect(server.log(for: "\(Self.id)/1.0.pkg").count == 1, "a 403 is not retried")
    }
}
