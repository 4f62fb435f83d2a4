import Crypto
import Foundation
import PkgKitDiagnostics
import PkgKitSupport

/// A catalog's signature file, `signatures/<sha256>.sig` beside `catalog.json` (docs/catalog.md):
/// `<sha256>` is the lowercase hex SHA-256 of the exact catalog bytes it signs, and the file holds
/// one line per signing key, each the base64 Ed25519 signature of those bytes.
///
/// Naming the file after the bytes pairs every catalog with its own signature: a CDN that
/// serves a stale catalog serves it with the signature of that same stale catalog, never with
/// a newer one's. A catalog is trusted when any line verifies with any trusted key, so that a
/// folder can be signed with an old and a new key while apps trusting either are in the field.
public enum CatalogSignature {
    /// The folder of signature files, beside `catalog.json`.
    public static let folderName = "signatures"
    /// The largest signature file read (16 KiB: about 180 lines): more is refused unread, so a
    /// broken server cannot make a client hold an endless file.
    public static let maximumBytes = 16 << 10

    /// The lowercase hex SHA-256 of `catalog`: the signature file's name without `.sig`.
    public static func digest(of catalog: Data) -> String {
        SHA256.hash(data: catalog).hexString
    }

    /// Where the signature of these catalog bytes is, relative to the catalog:
    /// `signatures/<sha256>.sig`.
    public static func relativePath(for catalog: Data) -> String {
        folderName + "/" + digest(of: catalog) + ".sig"
    }

    /// The signature file's URL for these catalog bytes: `relativePath(for:)` resolved against
    /// the catalog's own URL (`http(s)://` or `file://`).
    public static func url(for catalog: Data, catalogURL: URL) -> URL {
        let relative = relativePath(for: catalog)
        return URL(string: relative, relativeTo: catalogURL)?.absoluteURL ?? catalogURL.deletingLastPathComponent().appendingPathComponent(relative)
    }

    /// True for a name publish gives signature files: 64 lowercase hex digits and `.sig`.
    public static func isSignatureFileName(_ name: String) -> Bool {
        let utf8 = Array(name.utf8)
        guard utf8.count == 68, name.hasSuffix(".sig") else { return false }
        return utf8[0..<64].allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    /// The file's bytes for these signatures: one base64 line each, in order, each ending in a
    /// newline.
    public static func fileContents(for signatures: [Data]) -> Data {
        Data(signatures.map { $0.base64EncodedString() + "\n" }.joined().utf8)
    }

    /// The signature file of `catalog` signed with each of `keys`, one line per key in the order
    /// given. Ed25519 is deterministic: the same bytes and keys always give the same file.
    public static func fileContents(signing catalog: Data, with keys: [CatalogSigningKey]) -> Data {
        fileContents(for: keys.map { $0.signature(for: catalog) })
    }

    /// The 64-byte signatures in a signature file. Lines end in LF (CR LF and trailing white
    /// space are accepted), empty lines are skipped, and a line that is not base64 of 64 bytes
    /// is passed over, so that a file may one day carry other kinds of lines. Throws when the
    /// file is over `maximumBytes` or holds no signature at all.
    public static func signatures(fromFile contents: Data, path: String) throws(SignatureError) -> [Data] {
        guard contents.count <= maximumBytes else {
            throw SignatureError("is over \(maximumBytes) bytes: not a signature file", path: path)
        }
        var found: [Data] = []
        for line in contents.split(separator: 0x0A) {
            var bytes = line
            while let last = bytes.last, [0x0D, 0x20, 0x09].contains(last) { bytes = bytes.dropLast() }
            guard !bytes.isEmpty, let text = String(bytes: bytes, encoding: .ascii),
                  let signature = Data(base64Encoded: text), signature.count == 64 else { continue }
            found.append(signature)
        }
        guard !found.isEmpty else {
            throw SignatureError("holds no Ed25519 signature (each line must be the base64 of a 64-byte signature)", path: path)
        }
        return found
    }

    /// Checks `catalog` against its signature file (`signatureFile`, nil when there is none):
    /// accepted when any line verifies with any of `trustedKeys`. Throws `SignatureError`
    /// (`bad-signature`) about `path` when the file is missing or malformed, or no line verifies.
    public static func verify(_ catalog: Data, signatureFile: Data?, trustedKeys: [CatalogVerifyingKey],
                              path: String) throws(SignatureError) {
        guard let signatureFile else {
            throw SignatureError("is missing, and a trusted key was given: \(hint: .signCatalog), and upload signatures/ before catalog.json", path: path)
        }
        let signatures = try signatures(fromFile: signatureFile, path: path)
        let verifies = signatures.contains { signature in
            trustedKeys.contains { $0.isValidSignature(signature, for: catalog) }
        }
        guard verifies else {
            let keys = trustedKeys.count == 1 ? "the trusted key" : "any of the \(trustedKeys.count) trusted keys"
            let count = signatures.count == 1 ? "its signature does not verify" : "none of its \(signatures.count) signatures verifies"
            throw SignatureError("\(count) with \(keys): the catalog was changed after signing, or signed with another key", path: path)
        }
    }
}
