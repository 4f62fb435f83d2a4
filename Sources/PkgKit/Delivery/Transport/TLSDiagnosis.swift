
#if canImport(NIOSSL)
import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import PkgKitSupport

/// Why a TLS connection failed, found out after the fact. The TLS library says only that a
/// certificate did not verify; to say why (expired, another host's, an unknown authority), a
/// second handshake with the server collects the certificate chain it presents, refuses it in
/// the verification step (so the connection never carries a byte of HTTP), and the chain is
/// judged here.
enum TLSDiagnosis {
    /// What a TLS library error says, when it is one: a handshake problem, or `.unverified` when
    /// the certificate did not verify (for `diagnose` to find why). nil for any other error.
    package static func failure(of error: any Error) -> TLSFailure? {
        if let error = error as? NIOSSLExtraError, error == .failedToValidateHostname {
            return .unverified
        }
        guard let error = error as? NIOSSLError else { return nil }
        switch error {
        case .handshakeFailed(let reason):
            return failure(ofHandshake: String(describing: reason))
        case .unableToValidateCertificate, .noCertificateToValidate:
            return .unverified
        default:
            return nil
        }
    }

    /// The BoringSSL reason names a failed handshake's error stack holds, as a problem. Only the
    /// names are looked at; the stack's text (numbers, source paths) is never shown.
    package static func failure(ofHandshake text: String) -> TLSFailure {
        let reasons: [(String, TLSFailure)] = [
            ("CERTIFICATE_VERIFY_FAILED", .unverified),
            ("WRONG_VERSION_NUMBER", .handshake(.notTLS)),
            ("HTTP_REQUEST", .handshake(.notTLS)),
            ("PROTOCOL_VERSION", .handshake(.protocolVersion)),
            ("UNSUPPORTED_PROTOCOL", .handshake(.protocolVersion)),
            ("NO_SHARED_CIPHER", .handshake(.cipher)),
            ("NO_CIPHERS_AVAILABLE", .handshake(.cipher)),
            ("NO_COMMON_SIGNATURE_ALGORITHMS", .handshake(.cipher)),
            ("HANDSHAKE_FAILURE", .handshake(.cipher)),
        ]
        return reasons.first { text.contains($0.0) }?.1 ?? .handshake(.other)
    }

    /// Why the certificate `host:port` presents does not verify, judged at `now`; `.unverified`
    /// when the server cannot be asked again within `limit`.
    static func diagnose(host: String, port: Int, now: Date = Date(), limit: TimeAmount = .seconds(10)) async -> TLSFailure {
        guard let chain = await presentedChain(host: host, port: port, limit: limit) else { return .unverified }
        return judge(der: chain, host: host, now: now)
    }

    /// `judge` of a chain of DER certificates, leaf first; one that cannot be read is left out.
    static func judge(der chain: [[UInt8]], host: String, now: Date) -> TLSFailure {
        judge(chain.compactMap { try? CertificateNames(der: $0) }, host: host, now: now)
    }

    /// What is wrong with `chain` (leaf first) for `host` at `now`, in the order a person fixes
    /// it: the server's own certificate's dates, then its names, then the rest of the chain's
    /// dates; a chain with none of these wrong leads to no trusted authority.
    static func judge(_ chain: [CertificateNames], host: String, now: Date) -> TLSFailure {
        guard let leaf = chain.first else { return .unverified }
        if let dates = dateProblem(leaf, now: now) { return dates }
        let names = leaf.hostNames
        if !names.contains(where: { matches(host: host, name: $0) }) { return .otherHost(names: names) }
        for certificate in chain.dropFirst() {
            if let dates = dateProblem(certificate, now: now) { return dates }
        }
        return .unknownIssuer
    }

    private static func dateProblem(_ certificate: CertificateNames, now: Date) -> TLSFailure? {
        if certificate.notAfter < now { return .expired(notAfter: certificate.notAfter) }
        if certificate.notBefore > now { return .notYetValid(notBefore: certificate.notBefore) }
        return nil
    }

    /// True when `name` (possibly `*.example.com`, one label wide) names `host`.
    package static func matches(host: String, name: String) -> Bool {
        let host = host.lowercased(), name = name.lowercased()
        if name == host { return true }
        guard name.hasPrefix("*."), let dot = host.firstIndex(of: ".") else { return false }
        return host[dot...] == name.dropFirst()
    }

    /// The chain the server presents in a handshake that is refused at its verification step
    /// (nothing but the handshake is ever sent), or nil when none came within `limit`.
    private static func presentedChain(host: String, port: Int, limit: TimeAmount) async -> [[UInt8]]? {
        // The chain the verification callback saw, handed from the event loop to this task.
        let seen = LockedValue<[[UInt8]]?>(nil)
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.certificateVerification = .fullVerification
        guard let context = try? NIOSSLContext(configuration: configuration) else { return nil }
        // Server Name Indication takes a name, never an address.
        let isAddress = host.allSatisfy { $0.isNumber || $0 == "." } || host.contains(":")
        let bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(limit)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let handler = try NIOSSLClientHandler(context: context, serverHostname: isAddress ? nil : host,
                                                          customVerificationCallback: { chain, verdict in
                        let presented = chain.compactMap { try? $0.toDERBytes() }
                        seen.withLock { $0 = presented }
                        verdict.succeed(.failed)
                    })
                    try channel.pipeline.syncOperations.addHandler(handler)
                }
            }
        do {
            let channel = try await bootstrap.connect(host: host, port: port).get()
            // A refused verification ends the handshake and closes the channel; a server that
            // stays silent is closed after `limit`.
            // A cancelled sync closes it at once.
            let backstop = channel.eventLoop.scheduleTask(in: limit) { channel.close(promise: nil) }
            await withTaskCancellationHandler {
                try? await channel.closeFuture.get()
            } onCancel: {
                channel.close(promise: nil)
            }
            backstop.cancel()
        } catch {
            return nil
        }
        return seen.current
    }
}
#endif
