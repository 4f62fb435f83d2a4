import Foundation

/// A private certificate authority and server certificates made with `openssl` in a folder of
/// the test's (never added to the machine's trust store): one for `localhost` and 127.0.0.1,
/// one for other names, one for `localhost` that expired in 2020, and a second, unrelated CA.
public struct TestCertificates: Sendable {
    /// The folder holding every file.
    public let folder: String

    /// The CA's certificate (PEM): what `--ca-cert` is given.
    public var authority: String { folder + "/ca.pem" }
    /// Another CA's certificate, which signed none of the servers'.
    public var otherAuthority: String { folder + "/other-ca.pem" }

    /// A server certificate (and its key) signed by the CA.
    public struct Server: Sendable {
        /// The certificate (PEM).
        public let certificate: String
        /// Its private key (PEM).
        public let key: String
    }

    /// `localhost` and `127.0.0.1`, valid now.
    public var localhost: Server { server("localhost") }
    /// `other.example` and `www.other.example`, valid now.
    public var otherHost: Server { server("other") }
    /// `localhost`, valid only in January 2020.
    public var expired: Server { server("expired") }

    /// Makes the CA and the certificates in `folder` (created).
    public init(in folder: String) throws {
        self.folder = folder
        try FileManager.default.createDirectory(atPath: folder + "/issued", withIntermediateDirectories: true)
        try Data().write(to: URL(fileURLWithPath: folder + "/index.txt"))
        try "01\n".write(toFile: folder + "/serial", atomically: true, encoding: .utf8)
        // `openssl ca` is the tool of OpenSSL 3.0 that sets a certificate's dates in the past.
        try """
        [ ca ]
        default_ca = test
        [ test ]
        database = \(folder)/index.txt
        new_certs_dir = \(folder)/issued
        serial = \(folder)/serial
        default_md = sha256
        policy = anything
        copy_extensions = copy
        unique_subject = no
        [ anything ]
        commonName = supplied

        """.write(toFile: folder + "/ca.cnf", atomically: true, encoding: .utf8)
        for name in ["ca", "other-ca"] {
            try openssl("req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout \(name).key -out \(name).pem -days 3650"
                        + " -subj '/CN=pkgtool test \(name)' -addext basicConstraints=critical,CA:TRUE"
                        + " -addext keyUsage=critical,keyCertSign,cRLSign")
        }
        let servers = [("localhost", "DNS:localhost,IP:127.0.0.1", "-days 30"),
                       ("other", "DNS:other.example,DNS:www.other.example", "-days 30"),
                       ("expired", "DNS:localhost,IP:127.0.0.1", "-startdate 20200101000000Z -enddate 20200201000000Z")]
        for (name, names, dates) in servers {
            try openssl("req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout \(name).key -out \(name).csr"
                        + " -subj /CN=\(name) -addext subjectAltName=\(names)")
            try openssl("ca -batch -config ca.cnf -cert ca.pem -keyfile ca.key -in \(name).csr -out \(name).pem -notext \(dates)")
        }
    }

    private func server(_ name: String) -> Server {
        Server(certificate: folder + "/\(name).pem", key: folder + "/\(name).key")
    }

    private func openssl(_ arguments: String) throws {
        try CommandRunner.shell("openssl " + arguments + " 2>&1", in: URL(fileURLWithPath: folder))
    }
}
