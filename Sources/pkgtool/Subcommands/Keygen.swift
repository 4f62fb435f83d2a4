import ArgumentParser
import PkgKit

extension Pkgtool {
    /// `pkgtool keygen`: an Ed25519 key pair for signing catalogs.
    struct Keygen: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make an Ed25519 key pair for signing catalogs (publish --sign, sync --trust).",
            discussion: """
            Writes NAME.pem (the private key, PKCS#8 PEM, mode 0600: keep it secret and out of version \
            control) and NAME.pub.pem (the public key, SubjectPublicKeyInfo PEM: ship it in the app), in the \
            formats openssl writes. An existing NAME.pem is never overwritten: it is kept (status existing) \
            and a missing NAME.pub.pem is derived from it; a NAME.pub.pem that does not match it is refused. \
            Missing folders above NAME are created. Exit 0 created or kept, 1 refused, 2 could not be done.
            """)

        @Option(name: .customLong("out"), help: ArgumentHelp("Base name: writes NAME.pem and NAME.pub.pem.", valueName: "NAME"))
        var name: String

        @OptionGroup var outputOptions: OutputOptions
        @ParentCommand var root: Pkgtool

        /// `--json` and `--quiet`, given before or after the command name.
        var output: OutputOptions { outputOptions.merged(with: root.outputOptions) }

        func validate() throws {
            if name.isEmpty || name.hasSuffix("/") { throw ValidationError("--out needs a file name, like release-key") }
        }

        /// `keygen --json`.
        struct Report: Encodable {
            var status: String
            var privateKey: String
            var publicKey: String
            var publicKeyPEM: String?
            var diagnostics: [Diagnostic]

            func encode(to encoder: Encoder) throws {
                var c = encoder.container(keyedBy: CodingKeys.self)
                try c.encode(status, forKey: .status)
                try c.encode(privateKey, forKey: .privateKey)
                try c.encode(publicKey, forKey: .publicKey)
                try c.encode(publicKeyPEM, forKey: .publicKeyPEM)
                try c.encode(diagnostics, forKey: .diagnostics)
            }

            enum CodingKeys: String, CodingKey { case status, privateKey, publicKey, publicKeyPEM, diagnostics }
        }

        func run() throws {
            let files = SigningKeyFiles(name: name)
            var report = Report(status: "failed", privateKey: files.privateKeyPath, publicKey: files.publicKeyPath,
                                publicKeyPEM: nil, diagnostics: [])
            do {
                let (status, key) = try files.generate()
                report.status = status.rawValue
                report.publicKeyPEM = key.pemRepresentation
            } catch {
                report.status = error.disposition.rawValue
                report.diagnostics = [error.diagnostic]
                if output.json { Console.json(report) } else { Console.print(report.diagnostics, quiet: false) }
                // SPEC section 4: a refusal is 1, work that could not be done 2.
                throw ExitCode(error.disposition == .refused ? 1 : 2)
            }
            if output.json {
                Console.json(report)
            } else if !output.quiet {
                if report.status == SigningKeyFiles.Status.created.rawValue {
                    Console.out("created \(files.privateKeyPath) (private key, mode 0600: keep it secret, out of version control)")
                } else {
                    Console.out("kept the existing \(files.privateKeyPath) (keygen never overwrites a key)")
                }
                Console.out("public key \(files.publicKeyPath) (ship it in the app; sync --trust \(files.publicKeyPath)):")
                Console.out((report.publicKeyPEM ?? "").trimmingCharacters(in: .newlines))
            }
        }
    }
}
