import Foundation
internal import SwiftASN1
import PkgKitSupport
import PkgKitDiagnostics

/// Which certificate authorities an HTTPS server's certificate may lead to: the system's trust
/// store (the one curl and openssl use on the machine, `SSL_CERT_FILE` and `SSL_CERT_DIR`
/// included), plus the certificates added here. A staging server signed by a private CA, or an
/// app that pins its own CA, adds that CA's certificate; nothing here turns verification off.
///
/// ```swift
/// let trust = try ServerTrust(pemFiles: ["staging-ca.pem"])
/// let client = SyncClient(catalogURL: url, documents: documents, transport: StandardTransport(trust: trust))
/// ```
public struct ServerTrust: Sendable, Hashable {
    /// The certificates trusted besides the system's, DER-encoded, in the order given.
    public private(set) var additionalCertificates: [Data]

    /// The system's trust store alone.
    public static let system = ServerTrust(checkedDER: [])

    private init(checkedDER: [Data]) {
        additionalCertificates = checkedDER
    }

    /// The system's store plus every certificate of the PEM text `pem` (one or several
    /// `BEGIN CERTIFICATE` blocks). `source` names the text in errors (its file, say).
    public init(pem: String, source: String) throws(ServerTrustError) {
        self.init(checkedDER: try Self.certificates(inPEM: pem, source: source))
    }

    /// The system's store plus every certificate of each PEM file in `pemFiles`.
    public init(pemFiles: [String]) throws(ServerTrustError) {
        var found: [Data] = []
        for path in pemFiles {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw ServerTrustError(path: path, "cannot read the certificate file")
            }
            found += try Self.certificates(inPEM: String(decoding: data, as: UTF8.self), source: path)
        }
        self.init(checkedDER: found)
    }

    /// The system's store plus every certificate of each PEM file in `pemFiles` (file URLs: a
    /// CA certificate in the app's bundle, say).
    public init(pemFiles: [URL]) throws(ServerTrustError) {
        try self.init(pemFiles: pemFiles.map(FileURLs.path(of:)))
    }

    /// The certificates of `other` added to these.
    public func adding(_ other: ServerTrust) -> ServerTrust {
        ServerTrust(checkedDER: additionalCertificates + other.additionalCertificates)
    }

    /// The DER of each `BEGIN CERTIFICATE` block, each checked to be a certificate.
    private static func certificates(inPEM text: String, source: String) throws(ServerTrustError) -> [Data] {
        let begin = "-----BEGIN CERTIFICATE-----", end = "-----END CERTIFICATE-----"
        var found: [Data] = []
        var rest = Substring(text)
        while let start = rest.range(of: begin) {
            guard let stop = rest.range(of: end, range: start.upperBound..<rest.endIndex) else {
                throw ServerTrustError(path: source, "certificate \(found.count + 1) has no END CERTIFICATE line")
            }
            let base64 = rest[start.upperBound..<stop.lowerBound].filter { !$0.isWhitespace }
            guard let der = Data(base64Encoded: String(base64)), !der.isEmpty, isCertificate(der) else {
                throw ServerTrustError(path: source, "certificate \(found.count + 1) is not a valid X.509 certificate")
            }
            found.append(der)
            rest = rest[stop.upperBound...]
        }
        guard !found.isEmpty else {
            throw ServerTrustError(path: source, "holds no PEM certificate (a -----BEGIN CERTIFICATE----- block)")
        }
        return found
    }

    /// True when `der` has an X.509 certificate's outline: a SEQUENCE of the signed part, the
    /// signature's algorithm and the signature (the TLS library reads the rest when it loads it).
    private static func isCertificate(_ der: Data) -> Bool {
        guard let node = try? DER.parse(Array(der)), node.identifier == .sequence,
              case .constructed(let children) = node.content else { return false }
        let parts = Array(children)
        return parts.count == 3 && parts[0].identifier == .sequence && parts[1].identifier == .sequence
            && parts[2].identifier == .bitString
    }
}

/// A certificate file that cannot be used as a trust root: unreadable, or not PEM certificates.
public struct ServerTrustError: Error, Sendable, Equatable, CustomStringConvertible, DiagnosableError {
    /// The file (or the source named).
    public var path: String
    /// What is wrong with it.
    public var reason: String

    /// The failure of `path`.
    public init(path: String, _ reason: String) {
        self.path = path
        self.reason = reason
    }

    /// `path: reason`.
    public var description: String { "\(path): \(reason)" }

    /// `unreadable-input` on the file.
    public var diagnostic: Diagnostic { Diagnostic(.unreadableInput, path: path, reason) }

    /// Nothing could be fetched without it.
    public var disposition: ErrorDisposition { .failed }
}
