import Crypto
import Foundation
import PkgKitSupport
import PkgKitFormat
import PkgKitCatalog
import PkgKitTransport

/// The last catalog a sync verified for one catalog URL, kept inside the Documents folder so the
/// next run can ask the server whether it changed (`If-None-Match` / `If-Modified-Since`) and, on
/// `304 Not Modified`, use these bytes instead of downloading them again.
///
/// It lives in `DIR/.pkgtool-catalogs/<sha256 of the URL>`: a dot-name is never a product
/// identifier, so the installer, `--keep` and the search for installed products pass it by. The
/// file is one JSON line (the URL, the validators, the catalog's size and sha256, and the
/// signature file verified with it) followed by the catalog's exact bytes. A kept catalog is a
/// hint, never a trust: one that does not read back whole, for this URL, with its own digest, is
/// ignored (the catalog is fetched afresh), and the bytes it holds are verified again by every run
/// that uses them.
struct KeptCatalog: Sendable, Equatable {
    /// The folder inside the Documents folder.
    static let folderName = ".pkgtool-catalogs"
    /// The largest header line read: the URL, two validators and a signature file.
    static let maximumHeaderBytes = 64 << 10

    /// The catalog's exact bytes.
    var bytes: Data
    /// The server's `ETag` and `Last-Modified` for these bytes.
    var validators: HTTPValidators
    /// The signature file that verified these bytes; nil when none did (an unsigned run).
    var signatureFile: Data?

    /// Where the catalog at `catalogURL` is kept in `documents`.
    static func path(documents: String, catalogURL: URL) -> String {
        let name = SHA256.hash(data: Data(catalogURL.absoluteString.utf8)).hexString
        return (documents.hasSuffix("/") ? documents : documents + "/") + folderName + "/" + name
    }

    /// The catalog kept for `catalogURL` in `documents`; nil when there is none, or it is damaged,
    /// incomplete or another URL's.
    static func read(documents: String, catalogURL: URL) -> KeptCatalog? {
        guard let handle = FileHandle(forReadingAtPath: path(documents: documents, catalogURL: catalogURL)) else { return nil }
        defer { try? handle.close() }
        // The header first, then the catalog's bytes read straight into their own buffer: a
        // large catalog is held once, not twice.
        guard let head = try? handle.read(upToCount: maximumHeaderBytes),
              let newline = head.firstIndex(of: 0x0A),
              let header = try? JSONSerialization.jsonObject(with: head[head.startIndex ..< newline]) as? [String: Any],
              header["url"] as? String == catalogURL.absoluteString,
              let size = header["size"] as? Int, (0 ... Catalog.maximumBytes).contains(size),
              let digest = header["sha256"] as? String,
              let validators = HTTPValidators(etag: header["etag"] as? String, lastModified: header["lastModified"] as? String),
              (try? handle.seek(toOffset: UInt64(newline - head.startIndex + 1))) != nil,
              let bytes = try? handle.read(upToCount: size + 1) ?? Data(),
              bytes.count == size, SHA256.hash(data: bytes).hexString == digest
        else { return nil }
        var signatureFile: Data?
        if let text = header["signature"] as? String {
            guard let decoded = Data(base64Encoded: text) else { return nil }
            signatureFile = decoded
        }
        return KeptCatalog(bytes: bytes, validators: validators, signatureFile: signatureFile)
    }

    /// Keeps this catalog for `catalogURL` in `documents`, replacing the one kept before at once
    /// (written aside, flushed, renamed). Does nothing when `documents` is not there: keeping a
    /// catalog never creates the Documents folder.
    func write(documents: String, catalogURL: URL) throws {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: documents, isDirectory: &isFolder), isFolder.boolValue else { return }
        let path = Self.path(documents: documents, catalogURL: catalogURL)
        try FileManager.default.createDirectory(atPath: AtomicFile.directory(of: path), withIntermediateDirectories: true)
        // Spelled out, not through JSONSerialization: its sorted keys are compared under a locale,
        // and loading the locale data was a sync's last and slowest step.
        var fields = ["\"sha256\":\"" + SHA256.hash(data: bytes).hexString + "\"", "\"size\":\(bytes.count)",
                      "\"url\":" + jsonStringLiteral(catalogURL.absoluteString)]
        if let etag = validators.etag { fields.append("\"etag\":" + jsonStringLiteral(etag)) }
        if let lastModified = validators.lastModified { fields.append("\"lastModified\":" + jsonStringLiteral(lastModified)) }
        if let signature = signatureFile?.base64EncodedString() { fields.append("\"signature\":\"" + signature + "\"") }
        var line = Data(("{" + fields.joined(separator: ",") + "}").utf8)
        line.append(0x0A)
        let file = try AtomicFile(destination: path)
        try file.output.write(Array(line))
        try bytes.withUnsafeBytes { try file.output.write($0) }
        try file.commit()
    }
}
