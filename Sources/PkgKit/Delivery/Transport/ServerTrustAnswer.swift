import Foundation

/// How an HTTPS server's certificate is judged under a `ServerTrust`, the decision behind
/// URLSession's server-trust challenge (`ServerTrustChallenge`, Apple platforms only): with no
/// certificate added, the system judges it alone, as it would without PkgKit; with some, they
/// become the evaluation's anchor certificates beside the system's (never instead of them), so
/// a server signed by the app's own CA is trusted and every public one still is.
package enum ServerTrustAnswer: Sendable, Equatable {
    /// Leave the challenge to the system (URLSession's default handling).
    case systemDefault
    /// Evaluate the server's chain with these certificates (DER, in the order given) added as
    /// anchors to the system's.
    case evaluate(anchors: [Data])
}

extension ServerTrust {
    /// The answer to a server-trust challenge under this trust.
    package var answer: ServerTrustAnswer {
        additionalCertificates.isEmpty ? .systemDefault : .evaluate(anchors: additionalCertificates)
    }
}
