import Foundation

/// Why a server's TLS connection was not accepted, in terms a person can act on: the reason the
/// certificate did not verify, or what the handshake could not agree on. A transport finds it
/// (`TransportError.tls`); a front end may add its own advice to `message` (how to add a trust
/// root, for one).
public enum TLSFailure: Sendable, Equatable {
    /// The certificate does not lead to an authority in the trust store (a private CA, a
    /// self-signed certificate, or a chain the server sent incomplete).
    case unknownIssuer
    /// A certificate of the chain expired at this date.
    case expired(notAfter: Date)
    /// A certificate of the chain is not valid before this date.
    case notYetValid(notBefore: Date)
    /// The certificate holds none of the URL's host's names; these are the names it holds.
    case otherHost(names: [String])
    /// The handshake ended before a certificate was judged.
    case handshake(HandshakeProblem)
    /// The certificate did not verify, for a reason that could not be found out.
    case unverified

    /// What a TLS handshake could not agree on.
    public enum HandshakeProblem: String, Sendable, Equatable {
        /// No TLS version both sides speak (an old server, or one that allows only versions
        /// this client does not).
        case protocolVersion
        /// No cipher suite both sides accept.
        case cipher
        /// What came back was not TLS at all (a plain HTTP server on that port).
        case notTLS
        /// The server ended the handshake without saying why.
        case other
    }

    /// The reason in words, for a server called `host`, without advice that names a flag.
    public func message(host: String, now: Date = Date()) -> String {
        switch self {
        case .unknownIssuer:
            return "the certificate of \(host) is not signed by an authority this machine trusts"
        case .expired(let notAfter):
            return "the certificate of \(host) expired on \(Self.format(notAfter)): renew it on the server, "
                + "or if it has not expired, check this machine's clock (it says \(Self.format(now)))"
        case .notYetValid(let notBefore):
            return "the certificate of \(host) is not valid before \(Self.format(notBefore)): check this machine's clock "
                + "(it says \(Self.format(now)))"
        case .otherHost(let names):
            let held = names.isEmpty ? "no host name at all" : names.joined(separator: ", ")
            return "the certificate of \(host) was issued for another host (it holds \(held)): "
                + "use one of its names in the URL, or give the server a certificate for \(host)"
        case .handshake(let problem):
            switch problem {
            case .protocolVersion:
                return "the TLS handshake with \(host) failed: no TLS protocol version in common (this client speaks TLS 1.2 and 1.3)"
            case .cipher:
                return "the TLS handshake with \(host) failed: no cipher suite in common"
            case .notTLS:
                return "\(host) did not answer in TLS: is the server on that port plain http://?"
            case .other:
                return "the TLS handshake with \(host) failed: the server ended it (check its TLS protocol and cipher settings)"
            }
        case .unverified:
            return "the certificate of \(host) could not be verified"
        }
    }

    /// `2024-01-31 23:59:59 UTC`.
    package static func format(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss 'UTC'"
        return formatter.string(from: date)
    }
}
