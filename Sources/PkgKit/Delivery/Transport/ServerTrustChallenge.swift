// Apple platforms only (the Security framework). Not built or run here: it builds on Apple
// platforms only, and has not yet been run on a device; its decision (`ServerTrustAnswer`) is
// tested on Linux.
#if canImport(Security) && !os(Linux)
import Foundation
import Security

/// URLSession's server-trust challenge answered with a `ServerTrust`'s roots: the server's chain
/// evaluated with the added certificates as anchors beside the system's
/// (`SecTrustSetAnchorCertificatesOnly(false)`), and the host, dates and chain checked as always.
enum ServerTrustChallenge {
    /// What `challenge` is answered with under `trust`, and the reason a server is refused when it is.
    static func answer(_ challenge: URLAuthenticationChallenge, trust: ServerTrust)
        -> (disposition: URLSession.AuthChallengeDisposition, credential: URLCredential?, refused: TLSFailure?) {
        guard challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodServerTrust,
              case .evaluate(let anchors) = trust.answer, let serverTrust = challenge.protectionSpace.serverTrust else {
            return (.performDefaultHandling, nil, nil)
        }
        let certificates = anchors.compactMap { SecCertificateCreateWithData(nil, $0 as CFData) }
        guard certificates.count == anchors.count,
              SecTrustSetAnchorCertificates(serverTrust, certificates as CFArray) == errSecSuccess,
              SecTrustSetAnchorCertificatesOnly(serverTrust, false) == errSecSuccess else {
            return (.cancelAuthenticationChallenge, nil, .unverified)
        }
        var error: CFError?
        if SecTrustEvaluateWithError(serverTrust, &error) {
            return (.useCredential, URLCredential(trust: serverTrust), nil)
        }
        let code = error.map { CFErrorGetCode($0) } ?? 0
        return (.cancelAuthenticationChallenge, nil, code == CFIndex(errSecNotTrusted) ? .unknownIssuer : .unverified)
    }
}
#endif
