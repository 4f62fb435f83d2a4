
#if canImport(NIOSSL)
import Foundation
@testable import PkgKit
import Testing
import TestSupport
@testable import PkgKitTransport

/// Why a certificate did not verify, judged from the chain a server presents (issue 31): its
/// dates, then its names, else an authority this machine does not trust.
@Suite(.timeLimit(.minutes(2))) struct TLSDiagnosisTests {
    let scratch: Scratch
    let certificates: TestCertificates

    init() throws {
        scratch = try Scratch()
        certificates = try TestCertificates(in: scratch.path("pki"))
    }

    func chain(_ server: TestCertificates.Server) throws -> [[UInt8]] {
        try ServerTrust(pemFiles: [server.certificate, certificates.authority]).additionalCertificates.map { Array($0) }
    }

    @Test func aValidCertificateForTheHostLeadsToAnUnknownAuthority() throws {
        let chain = try chain(certificates.localhost)
        #expect(TLSDiagnosis.judge(der: chain, host: "localhost", now: Date()) == .unknownIssuer)
        #expect(TLSDiagnosis.judge(der: chain, host: "127.0.0.1", now: Date()) == .unknownIssuer)
        #expect(TLSDiagnosis.judge(der: chain, host: "LOCALHOST", now: Date()) == .unknownIssuer)
    }

    @Test func anotherHostsCertificateListsItsNames() throws {
        #expect(TLSDiagnosis.judge(der: try chain(certificates.otherHost), host: "localhost", now: Date())
                == .otherHost(names: ["other.example", "www.other.example"]))
        #expect(TLSDiagnosis.judge(der: try chain(certificates.localhost), host: "cdn.example.com", now: Date())
                == .otherHost(names: ["localhost", "127.0.0.1"]))
    }

    @Test func datesComeFirst() throws {
        let expired = TLSDiagnosis.judge(der: try chain(certificates.expired), host: "localhost", now: Date())
        #expect(expired == .expired(notAfter: Date(timeIntervalSince1970: 1_580_515_200)))
        // A clock set years back: the certificate is not valid yet.
        let early = TLSDiagnosis.judge(der: try chain(certificates.localhost), host: "other.example", now: Date(timeIntervalSince1970: 0))
        guard case .notYetValid = early else {
            Issue.record("\(early)")
            return
        }
    }

    @Test func wildcardsCoverOneLabel() {
        #expect(TLSDiagnosis.matches(host: "cdn.example.com", name: "*.example.com"))
        #expect(!TLSDiagnosis.matches(host: "a.cdn.example.com", name: "*.example.com"))
        #expect(!TLSDiagnosis.matches(host: "example.com", name: "*.example.com"))
    }

    @Test func noChainIsUnverified() {
        #expect(TLSDiagnosis.judge(der: [], host: "localhost", now: Date()) == .unverified)
    }
}
#endif
