import Foundation
internal import SwiftASN1

/// The few facts of an X.509 certificate that say why it did not verify: its validity dates
/// and the hosts it names. Read from the DER bytes with swift-asn1 (RFC 5280's `Certificate`,
/// `TBSCertificate`, `Validity`, `Name` and the subjectAltName extension); nothing else of the
/// certificate is decoded, and nothing here is trusted: it only words a failure the TLS library
/// has already decided.
struct CertificateNames: Equatable, Sendable {
    /// The validity period.
    var notBefore: Date
    var notAfter: Date
    /// The subjectAltName's DNS names, and its IP addresses as text, in order.
    var alternativeNames: [String]
    /// The subject's common names (what a TLS library falls back to without alternative names).
    var commonNames: [String]

    /// The hosts the certificate is for: its alternative names, else its common names.
    var hostNames: [String] { alternativeNames.isEmpty ? commonNames : alternativeNames }

    /// Reads `der`; throws when it is not a certificate.
    package init(der: [UInt8]) throws {
        let certificate = try Self.children(of: DER.parse(der))
        guard let tbs = certificate.first else { throw Self.malformed }
        var fields = try Self.children(of: tbs)[...]
        // [0] EXPLICIT version, when present; then serialNumber, signature, issuer.
        if fields.first?.identifier == ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific) { fields = fields.dropFirst() }
        fields = fields.dropFirst(3)
        guard fields.count >= 3 else { throw Self.malformed }
        let validity = try Self.children(of: fields[fields.startIndex])
        guard validity.count == 2 else { throw Self.malformed }
        notBefore = try Self.date(validity[0])
        notAfter = try Self.date(validity[1])
        commonNames = try Self.commonNames(in: fields[fields.startIndex + 1])
        alternativeNames = []
        // subjectPublicKeyInfo, then [1] and [2] unique IDs, then [3] EXPLICIT extensions.
        let extensionsTag = ASN1Identifier(tagWithNumber: 3, tagClass: .contextSpecific)
        if let wrapper = fields.dropFirst(3).first(where: { $0.identifier == extensionsTag }),
           let extensions = try Self.children(of: wrapper).first {
            for item in try Self.children(of: extensions) {
                let parts = try Self.children(of: item)
                guard parts.count >= 2, try ASN1ObjectIdentifier(derEncoded: parts[0]) == Self.subjectAltName,
                      case .primitive(let value) = parts[parts.count - 1].content else { continue }
                alternativeNames = try Self.generalNames(DER.parse(value))
            }
        }
    }

    private static let malformed = ASN1Error.invalidASN1Object(reason: "not a certificate")
    private static let subjectAltName: ASN1ObjectIdentifier = [2, 5, 29, 17]
    private static let commonName: ASN1ObjectIdentifier = [2, 5, 4, 3]

    private static func children(of node: ASN1Node) throws -> [ASN1Node] {
        guard case .constructed(let nodes) = node.content else { throw malformed }
        return Array(nodes)
    }

    /// A `Time`: UTCTime or GeneralizedTime, always UTC in a certificate.
    private static func date(_ node: ASN1Node) throws -> Date {
        var parts = DateComponents()
        if node.identifier == .utcTime {
            let time = try UTCTime(derEncoded: node)
            (parts.year, parts.month, parts.day) = (time.year, time.month, time.day)
            (parts.hour, parts.minute, parts.second) = (time.hours, time.minutes, time.seconds)
        } else {
            let time = try GeneralizedTime(derEncoded: node)
            (parts.year, parts.month, parts.day) = (time.year, time.month, time.day)
            (parts.hour, parts.minute, parts.second) = (time.hours, time.minutes, time.seconds)
        }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        guard let date = calendar.date(from: parts) else { throw malformed }
        return date
    }

    /// The commonName values of a `Name` (a sequence of sets of type-and-value pairs).
    private static func commonNames(in name: ASN1Node) throws -> [String] {
        var names: [String] = []
        for set in try children(of: name) {
            for pair in try children(of: set) {
                let parts = try children(of: pair)
                guard parts.count == 2, try ASN1ObjectIdentifier(derEncoded: parts[0]) == commonName,
                      case .primitive(let bytes) = parts[1].content else { continue }
                names.append(parts[1].identifier == .bmpString
                    ? String(decoding: stride(from: bytes.startIndex, to: bytes.endIndex - 1, by: 2).map { UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]) }, as: UTF16.self)
                    : String(decoding: bytes, as: UTF8.self))
            }
        }
        return names
    }

    /// The DNS names ([2] IA5String) and IP addresses ([7] OCTET STRING) of `GeneralNames`.
    private static func generalNames(_ node: ASN1Node) throws -> [String] {
        try children(of: node).compactMap { name in
            guard name.identifier.tagClass == .contextSpecific, case .primitive(let bytes) = name.content else { return nil }
            switch name.identifier.tagNumber {
            case 2: return String(decoding: bytes, as: UTF8.self)
            case 7: return ipText(Array(bytes))
            default: return nil
            }
        }
    }

    private static func ipText(_ bytes: [UInt8]) -> String {
        if bytes.count == 4 { return bytes.map(String.init).joined(separator: ".") }
        guard bytes.count == 16 else { return bytes.map { String($0, radix: 16) }.joined(separator: ":") }
        return stride(from: 0, to: 16, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
            .joined(separator: ":")
    }
}
