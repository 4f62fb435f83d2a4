import Crypto
import Foundation

/// Why a key file could not be used: not PEM, not Ed25519, malformed.
public struct KeyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong and what to do, in words for a diagnostic.
    public var reason: String

    /// An error with this reason.
    public init(_ reason: String) {
        self.reason = reason
    }

    /// The reason.
    public var description: String { reason }
}

/// An Ed25519 private key that signs catalogs (`publish --sign`). It reads and writes the
/// PKCS#8 PEM that `openssl genpkey -algorithm ed25519` writes.
///
/// The value holds the 32-byte seed (not a Crypto key object) so that it is `Sendable`.
public struct CatalogSigningKey: Sendable, Equatable {
    /// The 32-byte Ed25519 seed.
    public let rawRepresentation: [UInt8]

    /// A new random key.
    public init() {
        rawRepresentation = Array(Curve25519.Signing.PrivateKey().rawRepresentation)
    }

    /// The key with this 32-byte seed.
    public init(rawRepresentation: some Collection<UInt8>) throws(KeyError) {
        guard rawRepresentation.count == 32 else {
            throw KeyError("an Ed25519 private key is 32 bytes, not \(rawRepresentation.count)")
        }
        self.rawRepresentation = Array(rawRepresentation)
    }

    /// Reads a `-----BEGIN PRIVATE KEY-----` PEM document (PKCS#8, Ed25519).
    public init(pem: String) throws(KeyError) {
        try self.init(rawRepresentation: Ed25519KeyEncoding.seed(fromPEM: pem))
    }

    /// The key as PKCS#8 PEM, byte for byte as openssl writes it (trailing newline included).
    public var pemRepresentation: String { Ed25519KeyEncoding.privatePEM(seed: rawRepresentation) }

    /// The matching public key.
    public var publicKey: CatalogVerifyingKey {
        // The seed's length was checked on construction; Crypto accepts any 32 bytes.
        let key = try! Curve25519.Signing.PrivateKey(rawRepresentation: rawRepresentation)
        return CatalogVerifyingKey(checkedRawRepresentation: Array(key.publicKey.rawRepresentation))
    }

    /// The 64-byte Ed25519 signature of `data`.
    public func signature(for data: Data) -> Data {
        let key = try! Curve25519.Signing.PrivateKey(rawRepresentation: rawRepresentation)
        // Signing with a valid key only fails when the system's random source does.
        return try! key.signature(for: data)
    }

    /// The contents of `catalog.json.sig` for these catalog bytes: base64 of the signature,
    /// one line, a trailing newline.
    public func signatureFile(for catalog: Data) -> Data {
        CatalogSignature.fileContents(for: signature(for: catalog))
    }
}

/// An Ed25519 public key that verifies catalogs (`sync --trust`): the key an app ships. It reads
/// and writes the SubjectPublicKeyInfo PEM that `openssl pkey -pubout` writes.
public struct CatalogVerifyingKey: Sendable, Equatable {
    /// The 32-byte Ed25519 public key.
    public let rawRepresentation: [UInt8]

    /// The key with these 32 bytes.
    public init(rawRepresentation: some Collection<UInt8>) throws(KeyError) {
        guard rawRepresentation.count == 32, (try? Curve25519.Signing.PublicKey(rawRepresentation: Array(rawRepresentation))) != nil else {
            throw KeyError("an Ed25519 public key is 32 bytes, not \(rawRepresentation.count)")
        }
        self.rawRepresentation = Array(rawRepresentation)
    }

    init(checkedRawRepresentation: [UInt8]) {
        rawRepresentation = checkedRawRepresentation
    }

    /// Reads a `-----BEGIN PUBLIC KEY-----` PEM document (SubjectPublicKeyInfo, Ed25519).
    public init(pem: String) throws(KeyError) {
        try self.init(rawRepresentation: Ed25519KeyEncoding.publicKey(fromPEM: pem))
    }

    /// The key as SubjectPublicKeyInfo PEM, byte for byte as `openssl pkey -pubout` writes it.
    public var pemRepresentation: String { Ed25519KeyEncoding.publicPEM(key: rawRepresentation) }

    /// True when `signature` is this key's Ed25519 signature of exactly `data`.
    public func isValidSignature(_ signature: Data, for data: Data) -> Bool {
        guard let key = try? Curve25519.Signing.PublicKey(rawRepresentation: rawRepresentation) else { return false }
        return key.isValidSignature(signature, for: data)
    }

    /// Checks a catalog against the contents of its `catalog.json.sig` (nil when there is none).
    /// Throws `SignatureError` (`bad-signature`) when it is missing, malformed or wrong.
    public func verify(catalog: Data, signatureFile: Data?) throws(SignatureError) {
        guard let signatureFile else {
            throw SignatureError("\(Catalog.signatureFileName) is missing, and a trusted key was given: publish with --sign KEY.pem")
        }
        let signature = try CatalogSignature.signature(fromFile: signatureFile)
        guard isValidSignature(signature, for: catalog) else {
            throw SignatureError("\(Catalog.signatureFileName) does not verify with the trusted key: the catalog was changed after signing, or signed with another key")
        }
    }
}

/// The `catalog.json.sig` file: base64 of the 64-byte Ed25519 signature, one line.
public enum CatalogSignature {
    /// The file's bytes for a signature: base64, then a newline.
    public static func fileContents(for signature: Data) -> Data {
        Data((signature.base64EncodedString() + "\n").utf8)
    }

    /// The 64-byte signature in a signature file. Trailing white space (a newline, or CR LF) is
    /// accepted; anything else that is not one line of base64 is refused.
    public static func signature(fromFile contents: Data) throws(SignatureError) -> Data {
        var bytes = contents[...]
        while let last = bytes.last, [0x0A, 0x0D, 0x20, 0x09].contains(last) { bytes = bytes.dropLast() }
        guard bytes.count <= 1024, let text = String(bytes: bytes, encoding: .ascii),
              let signature = Data(base64Encoded: text) else {
            throw SignatureError("\(Catalog.signatureFileName) is not one line of base64")
        }
        guard signature.count == 64 else {
            throw SignatureError("\(Catalog.signatureFileName) holds \(signature.count) bytes, not a 64-byte Ed25519 signature")
        }
        return signature
    }
}

/// A catalog signature that is missing, malformed or does not verify: `bad-signature`.
public struct SignatureError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong, in words for a diagnostic.
    public var reason: String

    /// An error with this reason.
    public init(_ reason: String) {
        self.reason = reason
    }

    /// The `bad-signature` diagnostic for this error.
    public var diagnostic: Diagnostic { Diagnostic(.badSignature, path: Catalog.signatureFileName, reason) }

    /// The reason.
    public var description: String { reason }
}
