
#if canImport(NIOSSL)
import Foundation
import NIOSSL

/// The trust store curl and openssl use on this machine, as a TLS configuration: the
/// distribution's CA bundle and certificate folder, or what `SSL_CERT_FILE` and `SSL_CERT_DIR`
/// name instead (as OpenSSL reads them: either one replaces only its own default), plus the
/// certificates a `ServerTrust` adds. Verification is always full: certificate chain and host
/// name.
struct SystemTrustStore: Equatable {
    /// The CA bundle, when there is one.
    package var file: String?
    /// The certificate folders (hashed, as `openssl rehash` leaves them).
    package var folders: [String]

    package init(file: String? = nil, folders: [String]) {
        self.file = file
        self.folders = folders
    }

    /// Where the distributions keep the bundle, in the order OpenSSL's builds for them look.
    static let bundles = ["/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt", "/etc/ssl/cert.pem"]
    /// Where the distributions keep the hashed folder.
    static let defaultFolder = "/etc/ssl/certs"

    /// The store for `environment` (the process's by default).
    package static func current(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> SystemTrustStore {
        let file = environment["SSL_CERT_FILE"].flatMap { $0.isEmpty ? nil : $0 }
            ?? bundles.first { exists($0, folder: false) }
        let folders = environment["SSL_CERT_DIR"].flatMap { $0.isEmpty ? nil : $0.split(separator: ":").map(String.init) }
            ?? [defaultFolder]
        return SystemTrustStore(file: file, folders: folders.filter { exists($0, folder: true) })
    }

    /// A client configuration trusting this store and `trust`'s certificates. Throws when one of
    /// them cannot be loaded.
    package func configuration(adding trust: ServerTrust) throws -> TLSConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.certificateVerification = .fullVerification
        // TLS 1.0 and 1.1 are deprecated (RFC 8996): a server that offers nothing newer fails
        // its handshake with a reason, rather than carrying packages over them.
        tls.minimumTLSVersion = .tlsv12
        let file = file.flatMap { Self.exists($0, folder: false) ? $0 : nil }
        // The TLS library looks a hashed folder up lazily, but takes only one; the bundle is read
        // into memory beside it, and further folders' certificates too.
        if let folder = folders.first {
            tls.trustRoots = .file(folder)
            if let file { tls.additionalTrustRoots.append(.file(file)) }
        } else if let file {
            tls.trustRoots = .file(file)
        } else {
            tls.trustRoots = .certificates([])
        }
        for folder in folders.dropFirst() {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
            let certificates = names.sorted().flatMap { (try? NIOSSLCertificate.fromPEMFile(folder + "/" + $0)) ?? [] }
            if !certificates.isEmpty { tls.additionalTrustRoots.append(.certificates(certificates)) }
        }
        if !trust.additionalCertificates.isEmpty {
            tls.additionalTrustRoots.append(.certificates(try trust.additionalCertificates.map {
                try NIOSSLCertificate(bytes: Array($0), format: .der)
            }))
        }
        return tls
    }

    private static func exists(_ path: String, folder: Bool) -> Bool {
        var isFolder: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) && isFolder.boolValue == folder
    }
}
#endif
