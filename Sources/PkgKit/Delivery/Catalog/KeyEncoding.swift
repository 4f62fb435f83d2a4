internal import SwiftASN1
import Foundation
import PkgKitSupport
import PkgKitDiagnostics

/// The DER and PEM forms of Ed25519 keys that openssl reads and writes (RFC 8410):
/// `openssl genpkey -algorithm ed25519` writes a PKCS#8 `PRIVATE KEY`, `openssl pkey -pubout`
/// an X.509 SubjectPublicKeyInfo `PUBLIC KEY`.
enum Ed25519KeyEncoding {
    /// id-Ed25519, 1.3.101.112.
    package static let algorithm: ASN1ObjectIdentifier = [1, 3, 101, 112]
    static let privateLabel = "PRIVATE KEY"
    static let publicLabel = "PUBLIC KEY"

    /// `PRIVATE KEY` PEM (with a trailing newline, as openssl writes it) for a 32-byte seed.
    static func privatePEM(seed: [UInt8]) -> String {
        let document = PEMDocument(type: privateLabel, derBytes: serialize(PrivateKeyInfo(seed: seed)))
        return document.pemString + "\n"
    }

    /// `PUBLIC KEY` PEM (with a trailing newline) for a 32-byte public key.
    static func publicPEM(key: [UInt8]) -> String {
        let document = PEMDocument(type: publicLabel, derBytes: serialize(SubjectPublicKeyInfo(key: key)))
        return document.pemString + "\n"
    }

    /// The 32-byte seed in a `PRIVATE KEY` PEM document.
    package static func seed(fromPEM text: String) throws(KeyError) -> [UInt8] {
        let der = try derBytes(text, expected: privateLabel, kind: "private")
        do {
            return try PrivateKeyInfo(derEncoded: der).seed
        } catch let error as KeyError {
            throw error
        } catch {
            throw KeyError("the private key's DER is malformed (\(error)): write it with `openssl genpkey -algorithm ed25519` or `pkgtool keygen`")
        }
    }

    /// The 32-byte key in a `PUBLIC KEY` PEM document.
    package static func publicKey(fromPEM text: String) throws(KeyError) -> [UInt8] {
        let der = try derBytes(text, expected: publicLabel, kind: "public")
        do {
            return try SubjectPublicKeyInfo(derEncoded: der).key
        } catch let error as KeyError {
            throw error
        } catch {
            throw KeyError("the public key's DER is malformed (\(error)): write it with `openssl pkey -pubout` or `pkgtool keygen`")
        }
    }

    private static func derBytes(_ text: String, expected label: String, kind: String) throws(KeyError) -> [UInt8] {
        let wanted = label == publicLabel
            ? "give the Ed25519 public key (the NAME.pub.pem that `pkgtool keygen` wrote, or `openssl pkey -in KEY.pem -pubout`)"
            : "give the Ed25519 private key (the NAME.pem that `pkgtool keygen` wrote, or `openssl genpkey -algorithm ed25519`)"
        let document: PEMDocument
        do {
            document = try PEMDocument(pemString: text)
        } catch {
            let labels = beginLabels(text)
            guard !labels.isEmpty else { throw KeyError("not a PEM file (no '-----BEGIN \(label)-----' block): \(wanted)") }
            let named = labels.map { "'\(PathDisplay.printable($0))'" }.joined(separator: ", ")
            throw KeyError("holds \(labels.count == 1 ? "a damaged PEM block" : "\(labels.count) PEM blocks") (\(named)), not one '\(label)' block: \(wanted)")
        }
        guard document.discriminator == label else {
            throw KeyError("holds \(holding(document.discriminator)), not the \(kind) key: \(wanted)")
        }
        return document.derBytes
    }

    /// What a PEM block of this label is, in words.
    private static func holding(_ label: String) -> String {
        switch label {
        case "ENCRYPTED PRIVATE KEY":
            return "an encrypted private key (decrypt it with `openssl pkey -in KEY -out PLAIN.pem`; only the public key is ever shipped)"
        case "PUBLIC KEY": return "a public key (signing needs the private one: NAME.pem, not NAME.pub.pem)"
        case "PRIVATE KEY": return "a private key, which must never ship (only its public key is trusted)"
        case "CERTIFICATE", "TRUSTED CERTIFICATE", "X509 CERTIFICATE": return "a certificate (a certificate is a trust root for HTTPS, not a key that signs catalogs)"
        case "CERTIFICATE REQUEST", "NEW CERTIFICATE REQUEST": return "a certificate signing request"
        case let other where other.hasSuffix("PRIVATE KEY"): return "a private key in another format ('\(PathDisplay.printable(other))')"
        default: return "a '\(PathDisplay.printable(label))' PEM block"
        }
    }

    /// The labels of the `-----BEGIN …-----` lines in `text`, in order.
    private static func beginLabels(_ text: String) -> [String] {
        text.split(whereSeparator: \.isNewline).compactMap { line in
            let line = line.trimmingCharacters(in: .whitespaces)
            guard line.hasPrefix("-----BEGIN "), line.hasSuffix("-----"), line.count > 16 else { return nil }
            return String(line.dropFirst(11).dropLast(5))
        }
    }

    private static func serialize<T: DERSerializable>(_ value: T) -> [UInt8] {
        var coder = DER.Serializer()
        // Serialising fixed-size values into a fresh serializer cannot fail.
        try! coder.serialize(value)
        return coder.serializedBytes
    }

    /// A readable name for a key algorithm that is not Ed25519.
    package static func name(of oid: ASN1ObjectIdentifier) -> String {
        switch oid {
        case [1, 2, 840, 113549, 1, 1, 1]: return "an RSA key"
        case [1, 2, 840, 10045, 2, 1]: return "an elliptic-curve (ECDSA) key"
        case [1, 3, 101, 110]: return "an X25519 key (for key agreement, not signing)"
        case [1, 3, 101, 113]: return "an Ed448 key"
        default: return "a key of algorithm \(oid)"
        }
    }

    /// Parses `AlgorithmIdentifier ::= SEQUENCE { algorithm OID, parameters ANY OPTIONAL }` and
    /// requires Ed25519, whose parameters must be absent.
    static func requireEd25519(_ nodes: inout ASN1NodeCollection.Iterator) throws {
        guard let node = nodes.next() else { throw KeyError("the key has no algorithm identifier") }
        try DER.sequence(node, identifier: .sequence) { inner in
            let oid = try ASN1ObjectIdentifier(derEncoded: &inner)
            guard oid == algorithm else {
                throw KeyError("this is \(name(of: oid)), not an Ed25519 key: make one with `pkgtool keygen` or `openssl genpkey -algorithm ed25519`")
            }
            guard inner.next() == nil else { throw KeyError("the Ed25519 algorithm identifier carries parameters; RFC 8410 forbids them") }
        }
    }
}

/// `OneAsymmetricKey` (PKCS#8, RFC 5958) holding an Ed25519 seed: version 0 as openssl writes
/// it; version 1's optional attributes and public key are accepted and ignored on read.
private struct PrivateKeyInfo: DERImplicitlyTaggable {
    static var defaultIdentifier: ASN1Identifier { .sequence }

    var seed: [UInt8]

    init(seed: [UInt8]) {
        self.seed = seed
    }

    init(derEncoded rootNode: ASN1Node, withIdentifier identifier: ASN1Identifier) throws {
        self = try DER.sequence(rootNode, identifier: identifier) { nodes in
            let version = try Int(derEncoded: &nodes)
            guard version == 0 || version == 1 else { throw KeyError("unknown PKCS#8 version \(version)") }
            try Ed25519KeyEncoding.requireEd25519(&nodes)
            let outer = try ASN1OctetString(derEncoded: &nodes)
            // CurvePrivateKey ::= OCTET STRING, itself DER inside the privateKey octets.
            let inner = try ASN1OctetString(derEncoded: outer.bytes)
            guard inner.bytes.count == 32 else { throw KeyError("the Ed25519 private key is \(inner.bytes.count) bytes, not 32") }
            while nodes.next() != nil {}   // [0] attributes, [1] publicKey: not needed
            return PrivateKeyInfo(seed: Array(inner.bytes))
        }
    }

    func serialize(into coder: inout DER.Serializer, withIdentifier identifier: ASN1Identifier) throws {
        var inner = DER.Serializer()
        try inner.serialize(ASN1OctetString(contentBytes: seed[...]))
        try coder.appendConstructedNode(identifier: identifier) { coder in
            try coder.serialize(0)
            try coder.appendConstructedNode(identifier: .sequence) { coder in
                try coder.serialize(Ed25519KeyEncoding.algorithm)
            }
            try coder.serialize(ASN1OctetString(contentBytes: inner.serializedBytes[...]))
        }
    }
}

/// `SubjectPublicKeyInfo` (RFC 5280) holding a 32-byte Ed25519 public key.
private struct SubjectPublicKeyInfo: DERImplicitlyTaggable {
    static var defaultIdentifier: ASN1Identifier { .sequence }

    var key: [UInt8]

    init(key: [UInt8]) {
        self.key = key
    }

    init(derEncoded rootNode: ASN1Node, withIdentifier identifier: ASN1Identifier) throws {
        self = try DER.sequence(rootNode, identifier: identifier) { nodes in
            try Ed25519KeyEncoding.requireEd25519(&nodes)
            let bits = try ASN1BitString(derEncoded: &nodes)
            guard bits.paddingBits == 0, bits.bytes.count == 32 else {
                throw KeyError("the Ed25519 public key is \(bits.bytes.count) bytes, not 32")
            }
            return SubjectPublicKeyInfo(key: Array(bits.bytes))
        }
    }

    func serialize(into coder: inout DER.Serializer, withIdentifier identifier: ASN1Identifier) throws {
        try coder.appendConstructedNode(identifier: identifier) { coder in
            try coder.appendConstructedNode(identifier: .sequence) { coder in
                try coder.serialize(Ed25519KeyEncoding.algorithm)
            }
            try coder.serialize(ASN1BitString(bytes: key[...]))
        }
    }
}
