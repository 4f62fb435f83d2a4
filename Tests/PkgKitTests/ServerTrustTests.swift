import Foundation
#if canImport(NIOSSL)
import NIOSSL
#endif
@testable import PkgKit
import Testing
import TestSupport
@testable import PkgKitTransport

/// The certificate authorities trusted besides the system's (`sync --ca-cert`, issue 31), and
/// which system store is meant: the one openssl and curl use, `SSL_CERT_FILE` and
/// `SSL_CERT_DIR` included.
@Suite struct ServerTrustTests {
    let scratch: Scratch
    let certificates: TestCertificates

    init() throws {
        scratch = try Scratch()
        certificates = try TestCertificates(in: scratch.path("pki"))
    }

    @Test func everyCertificateOfEveryFileIsAdded() throws {
        let bundle = try String(contentsOfFile: certificates.authority, encoding: .utf8)
            + "a comment between them\n" + String(contentsOfFile: certificates.otherAuthority, encoding: .utf8)
        let both = try scratch.write("bundle.pem", bundle)
        let trust = try ServerTrust(pemFiles: [both, certificates.authority])
        #expect(trust.additionalCertificates.count == 3)
        #expect(trust.additionalCertificates[0] == trust.additionalCertificates[2])
        #expect(ServerTrust.system.additionalCertificates.isEmpty)
    }

    @Test func aFileThatIsNotACertificateIsNamed() throws {
        let missing = scratch.path("nothere.pem")
        #expect(throws: ServerTrustError(path: missing, "cannot read the certificate file")) { try ServerTrust(pemFiles: [missing]) }
        let key = certificates.localhost.key
        #expect(throws: ServerTrustError(path: key, "holds no PEM certificate (a -----BEGIN CERTIFICATE----- block)")) {
            try ServerTrust(pemFiles: [key])
        }
        let garbled = try scratch.write("garbled.pem", "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n")
        #expect(throws: ServerTrustError(path: garbled, "certificate 1 is not a valid X.509 certificate")) {
            try ServerTrust(pemFiles: [garbled])
        }
        let cut = try scratch.write("cut.pem", String(try String(contentsOfFile: certificates.authority, encoding: .utf8).prefix(200)))
        #expect(throws: ServerTrustError(path: cut, "certificate 1 has no END CERTIFICATE line")) { try ServerTrust(pemFiles: [cut]) }
        // As a diagnostic: the file, unreadable-input, a failure.
        let error = ServerTrustError(path: key, "holds no PEM certificate")
        #expect(error.diagnostic == Diagnostic(.unreadableInput, path: key, "holds no PEM certificate"))
        #expect(error.disposition == .failed)
    }

    /// URLSession's server-trust challenge (Apple platforms): the system judges alone when
    /// nothing is added; otherwise every added certificate, as openssl encodes it in DER, is an
    /// anchor beside the system's, in the order given.
    @Test func addedCertificatesBecomeTheChallengesAnchors() throws {
        #expect(ServerTrust.system.answer == .systemDefault)
        func der(_ pem: String) throws -> Data {
            let out = scratch.path(URL(fileURLWithPath: pem).lastPathComponent + ".der")
            try CommandRunner.run("/usr/bin/openssl", ["x509", "-in", pem, "-outform", "DER", "-out", out], deadline: .seconds(30))
            return try Data(contentsOf: URL(fileURLWithPath: out))
        }
        let bundle = try String(contentsOfFile: certificates.authority, encoding: .utf8)
            + String(contentsOfFile: certificates.otherAuthority, encoding: .utf8)
        let trust = try ServerTrust(pem: bundle, source: "bundle.pem")
        let anchors = [try der(certificates.authority), try der(certificates.otherAuthority)]
        #expect(anchors.allSatisfy { !$0.isEmpty })
        #expect(trust.answer == .evaluate(anchors: anchors))
        #expect(ServerTrust.system.adding(trust).answer == .evaluate(anchors: anchors))
    }

    #if canImport(NIOSSL)
    @Test func theSystemStoreIsOpenSSLs() throws {
        let folder = try scratch.mkdir("certs")
        let plain = SystemTrustStore.current([:])
        #expect(plain.file == SystemTrustStore.bundles.first { FileManager.default.fileExists(atPath: $0) })
        #expect(plain.folders == (FileManager.default.fileExists(atPath: "/etc/ssl/certs") ? ["/etc/ssl/certs"] : []))
        // Each variable replaces only its own default, as OpenSSL reads them.
        let file = SystemTrustStore.current(["SSL_CERT_FILE": certificates.authority])
        #expect(file.file == certificates.authority && file.folders == plain.folders)
        let folders = SystemTrustStore.current(["SSL_CERT_DIR": folder + ":" + scratch.path("nothere")])
        #expect(folders.file == plain.file && folders.folders == [folder])
        // Added certificates are loaded beside the store.
        let configuration = try SystemTrustStore(file: certificates.authority, folders: [])
            .configuration(adding: try ServerTrust(pemFiles: [certificates.otherAuthority]))
        #expect(configuration.trustRoots == .file(certificates.authority))
        #expect(configuration.additionalTrustRoots.count == 1)
        #expect(configuration.certificateVerification == .fullVerification)
    }
    #endif
}
