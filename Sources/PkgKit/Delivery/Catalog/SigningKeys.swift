import Crypto
import Foundation

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

    /// A signature file for these catalog bytes signed with this key alone: one base64 line
    /// and a newline (`CatalogSignature.fileContents(signing:with:)` signs with several keys).
    public func signatureFile(for catalog: Data) -> Data {
        CatalogSignature.fileContents(signing: catalog, with: [self])
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

    package init(checkedRawRepresentation: [UInt8]) {
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

    /// Checks a catalog against its signature file (nil when there is none) with this key
    /// alone; see `CatalogSignature.verify(_:signatureFile:trustedKeys:path:)`.
    public func verify(catalog: Data, signatureFile: Data?) throws(SignatureError) {
        try CatalogSignature.verify(catalog, signatureFile: signatureFile, trustedKeys: [self],
                                    path: CatalogSignature.relativePath(for: catalog))
    }
}
