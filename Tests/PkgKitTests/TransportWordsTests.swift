
#if canImport(AsyncHTTPClient)
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOSSL
@testable import PkgKit
import Testing
@testable import PkgKitTransport

/// What a network failure says (issue 29 items 4 and 5, issue 31): one plain line per failure,
/// naming the host and port or the HTTP status and what to check, never a library's own text,
/// an error number or a build path.
@Suite struct TransportWordsTests {
    static let url = "https://cdn.example.com:8443/content/catalog.json"

    /// Text no message may hold: a build folder, a library's name for itself, an error number.
    static func leaks(_ text: String) -> [String] {
        ["/.build/", "/checkouts/", "Sources/", "errno", "error:", "BoringSSL", "NIOSSL", "NIOConnection", "IOError", "HTTPClientError", "(error set)"]
            .filter { text.contains($0) }
    }

    /// Every kind of error the HTTP client and the TLS library throw, as the transport words it.
    @Test func noMessageTheTransportMakesHoldsALibrarysText() {
        var errors: [any Error] = [
            NIOSSLError.handshakeFailed(.sslError([])), NIOSSLError.handshakeFailed(.unknownError([])),
            NIOSSLError.unableToValidateCertificate, NIOSSLError.uncleanShutdown, NIOSSLExtraError.failedToValidateHostname,
            IOError(errnoCode: ECONNREFUSED, reason: "connect"), IOError(errnoCode: ECONNRESET, reason: "read"),
            IOError(errnoCode: EHOSTUNREACH, reason: "connect"), IOError(errnoCode: EPIPE, reason: "write"),
            IOError(errnoCode: ENOMEM, reason: "somewhere deep"),
            ChannelError.ioOnClosedChannel, ChannelError.eof, ChannelError.connectPending,
        ]
        errors += [HTTPClientError.invalidURL, .emptyHost, .readTimeout, .writeTimeout, .remoteConnectionClosed,
                   .invalidProxyResponse, .redirectLimitReached, .redirectCycleDetected, .uncleanShutdown, .bodyLengthMismatch,
                   .connectTimeout, .tlsHandshakeTimeout, .getConnectionFromPoolTimeout, .contentLengthMissing] as [any Error]
        for error in errors {
            let mapped = AsyncHTTPClientTransport.map(error, url: Self.url)
            guard let transport = mapped as? TransportError else {
                Issue.record("\(error) became \(mapped), not a TransportError")
                continue
            }
            #expect(Self.leaks(transport.description).isEmpty, "\(error) -> \(transport.description)")
            #expect(!transport.message.contains("\n"))
        }
    }

    @Test func aRefusedConnectionNamesTheHostAndPort() {
        let refused = AsyncHTTPClientTransport.map(IOError(errnoCode: ECONNREFUSED, reason: "connect"), url: "http://127.0.0.1:8080/catalog.json")
        #expect((refused as? TransportError)?.description == "http://127.0.0.1:8080/catalog.json: cannot connect to 127.0.0.1:8080: connection refused")
        #expect((refused as? TransportError)?.isTransient == true)
        // The scheme's port when the URL has none.
        #expect(TransportError.cannotConnect(url: "https://cdn.example.com/c.json", "timed out").message == "cannot connect to cdn.example.com:443: timed out")
        #expect(TransportError.connectionLost(url: "http://cdn.example.com/c.json", "the connection was reset").message
                == "the connection to cdn.example.com:80 was lost: the connection was reset")
    }

    @Test func permanentStatusesSayWhatToCheckAndOnlyServerErrorsMayPass() {
        for code in [401, 403, 404, 410, 418] {
            let error = TransportError.status(code, url: Self.url)
            #expect(error.message.hasPrefix("the server answered HTTP \(code)"))
            #expect(error.message.contains("check the URL"), "\(error.message)")
            #expect(!error.isTransient)
        }
        #expect(TransportError.status(404, url: Self.url).message.contains("(not found)"))
        #expect(TransportError.status(403, url: Self.url).message.contains("(forbidden)"))
        let unavailable = TransportError.status(503, url: Self.url)
        #expect(unavailable.isTransient && unavailable.message.contains("may pass"))
    }

    /// What each handshake failure of the TLS library is called.
    @Test func handshakeFailuresAreNamedByTheirReason() {
        let reasons: [(String, TLSFailure)] = [
            ("error:1000007d:SSL routines:OPENSSL_internal:CERTIFICATE_VERIFY_FAILED at /x/.build/checkouts/handshake.cc:320", .unverified),
            ("error:1000042e:SSL routines:OPENSSL_internal:TLSV1_ALERT_PROTOCOL_VERSION", .handshake(.protocolVersion)),
            ("error:10000410:SSL routines:OPENSSL_internal:SSLV3_ALERT_HANDSHAKE_FAILURE", .handshake(.cipher)),
            ("error:1000009c:SSL routines:OPENSSL_internal:HTTP_REQUEST", .handshake(.notTLS)),
            ("error:100000f7:SSL routines:OPENSSL_internal:WRONG_VERSION_NUMBER", .handshake(.notTLS)),
            ("something else", .handshake(.other)),
        ]
        for (text, failure) in reasons {
            #expect(TLSDiagnosis.failure(ofHandshake: text) == failure, "\(text)")
            let message = TransportError.tls(url: Self.url, host: "cdn.example.com", failure).description
            #expect(message.contains("cdn.example.com") && Self.leaks(message).isEmpty, "\(message)")
            #expect(!message.contains("--"), "PkgKit names no flag: \(message)")
        }
        #expect(!TransportError.tls(url: Self.url, host: "h", .unknownIssuer).isTransient)
    }

    @Test func certificateReasonsInWords() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let expired = TLSFailure.expired(notAfter: Date(timeIntervalSince1970: 1_580_515_200)).message(host: "localhost", now: now)
        #expect(expired == "the certificate of localhost expired on 2020-02-01 00:00:00 UTC: renew it on the server, "
                + "or if it has not expired, check this machine's clock (it says 2027-01-15 08:00:00 UTC)")
        let early = TLSFailure.notYetValid(notBefore: Date(timeIntervalSince1970: 1_900_000_000)).message(host: "h", now: now)
        #expect(early.contains("not valid before 2030-03-17") && early.contains("check this machine's clock"))
        let other = TLSFailure.otherHost(names: ["other.example", "www.other.example"]).message(host: "localhost", now: now)
        #expect(other.contains("issued for another host (it holds other.example, www.other.example)"))
    }
}
#endif
