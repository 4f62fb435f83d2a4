import Foundation
import PkgKitSupport
import PkgKitFormat
import PkgKitCatalog

/// The key pair files `pkgtool keygen --out NAME` manages: `NAME.pem` (the private key, mode
/// 0600) and `NAME.pub.pem` (the public key an app ships).
///
/// A private key is never overwritten: losing it would strand every app that trusts its public
/// key. When `NAME.pem` already exists, it is kept and reported (`existing`), and a missing
/// `NAME.pub.pem` is derived from it, so the command can run in every build without ever
/// replacing a key (as Sparkle's `generate_keys` does). Missing folders above `NAME` are
/// created, as for every output path.
public struct SigningKeyFiles: Sendable {
    /// `NAME.pem`.
    public var privateKeyPath: String
    /// `NAME.pub.pem`.
    public var publicKeyPath: String

    /// The files for `name` (a path without the `.pem`).
    public init(name: String) {
        privateKeyPath = name + ".pem"
        publicKeyPath = name + ".pub.pem"
    }

    /// Whether the key pair was made now or found.
    public enum Status: String, Sendable, Codable {
        /// A new key pair was written.
        case created
        /// `NAME.pem` was already there and is kept (its public key file written if missing).
        case existing
    }

    /// Writes a new key pair, or keeps the existing private key (see the type's summary).
    /// Returns the public key and what was done. Throws `KeyFileError`.
    public func generate() throws(KeyFileError) -> (status: Status, publicKey: CatalogVerifyingKey) {
        if let existing = try readIfPresent(privateKeyPath) {
            let key: CatalogSigningKey
            do {
                key = try CatalogSigningKey(pem: existing)
            } catch {
                throw .unreadable(path: privateKeyPath, "exists but is not an Ed25519 private key (\(error.reason)); keygen never overwrites a key: choose another NAME")
            }
            if let pub = try readIfPresent(publicKeyPath) {
                guard (try? CatalogVerifyingKey(pem: pub)) == key.publicKey else {
                    throw .refused(path: publicKeyPath, "is not the public key of \(privateKeyPath); keygen overwrites neither: remove the wrong one, or choose another NAME")
                }
            } else {
                try write(key.publicKey.pemRepresentation, to: publicKeyPath, mode: 0o644)
            }
            return (.existing, key.publicKey)
        }
        if try readIfPresent(publicKeyPath) != nil {
            throw .refused(path: publicKeyPath, "exists without its private key \(privateKeyPath): a new key would not match it; remove it or choose another NAME")
        }
        do {
            try makeOutputFolders(AtomicFile.directory(of: privateKeyPath))
        } catch {
            throw .io(path: error.path, error.reason)
        }
        let key = CatalogSigningKey()
        try write(key.pemRepresentation, to: privateKeyPath, mode: 0o600)
        do {
            try write(key.publicKey.pemRepresentation, to: publicKeyPath, mode: 0o644)
        } catch {
            unlink(privateKeyPath)
            throw error
        }
        return (.created, key.publicKey)
    }

    private func readIfPresent(_ path: String) throws(KeyFileError) -> String? {
        guard let data = FileManager.default.contents(atPath: path) else {
            // ENOTDIR: a file stands where a folder above must be; creating the folders says so.
            if access(path, F_OK) != 0 && (errno == ENOENT || errno == ENOTDIR) { return nil }
            throw .unreadable(path: path, "cannot read: \(errnoText())")
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// Writes a new file atomically, never replacing one that appeared meanwhile.
    private func write(_ text: String, to path: String, mode: mode_t) throws(KeyFileError) {
        do {
            let file = try AtomicFile(destination: path, mode: mode)
            try file.output.write(Array(text.utf8))
            guard try file.commitNew() else { throw KeyFileError.refused(path: path, "appeared while keygen ran; nothing was overwritten") }
        } catch let error as KeyFileError {
            throw error
        } catch let error as WriteError {
            throw .io(path: path, PublishedFile.describe(error))
        } catch {
            throw .io(path: path, "\(error)")
        }
    }
}
