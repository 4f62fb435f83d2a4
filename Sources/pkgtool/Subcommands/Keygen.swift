import ArgumentParser
import Foundation
import PkgKitDiagnostics
import PkgKit

extension Pkgtool {
    /// `pkgtool keygen`: an Ed25519 key pair for signing catalogs.
    struct Keygen: ReportingCommand {
        static let configuration = CommandConfiguration(
            commandName: "keygen",
            abstract: "Make an Ed25519 key pair for signing catalogs (publish --sign, sync --trust).",
            discussion: """
            Writes NAME.pem (the private key, PKCS#8 PEM, mode 0600: keep it secret and out of version \
            control) and NAME.pub.pem (the public key, SubjectPublicKeyInfo PEM: ship it in the app), in the \
            formats openssl writes. An existing NAME.pem is never overwritten: it is kept (status existing) \
            and a missing NAME.pub.pem is derived from it; a NAME.pub.pem that does not match it is refused. \
            Missing folders above NAME are created. Exit 0 created or kept, 1 refused, 2 could not be done.
            """)

        @Option(name: [.customLong("out"), .customShort("o"), .customLong("output")], help: ArgumentHelp("Base name: writes NAME.pem and NAME.pub.pem.", valueName: "NAME"))
        var name: String

        @OptionGroup var outputOptions: OutputOptions
        @ParentCommand var root: Pkgtool

        var subject: String { files.privateKeyPath }
        var leftWhenInterrupted: String { "no key was overwritten" }

        /// The key files `--out` names.
        private var files: SigningKeyFiles { SigningKeyFiles(name: name) }

        func validate() throws {
            if name.isEmpty || name.hasSuffix("/") { throw ValidationError("--out needs a file name, like release-key") }
        }

        func execute(_ output: OutputOptions, _ cancellation: Cancellation) throws -> KeygenReport {
            let (status, key) = try files.generate()
            return KeygenReport(status: KeygenReport.Status(status), privateKey: files.privateKeyPath,
                                publicKey: files.publicKeyPath, publicKeyPEM: key.pemRepresentation, diagnostics: [])
        }

        func report(for failure: any DiagnosableError) -> KeygenReport {
            KeygenReport(status: KeygenReport.Status(failure), privateKey: files.privateKeyPath, publicKey: files.publicKeyPath,
                         diagnostics: [failure.diagnostic])
        }

        func printText(_ report: KeygenReport, _ output: OutputOptions) {
            guard !output.quiet else { return }
            if report.status == .created {
                Console.out("created \(report.privateKey) (private key, mode 0600: keep it secret, out of version control)")
            } else {
                Console.out("kept the existing \(report.privateKey) (keygen never overwrites a key)")
            }
            Console.out("public key \(report.publicKey) (ship it in the app; sync --trust \(report.publicKey)):")
            Console.out((report.publicKeyPEM ?? "").trimmingCharacters(in: .newlines))
        }
    }
}

/// `keygen --json`: the key files, what was done with them, and the public key.
struct KeygenReport: Encodable, OutcomeReporting {
    /// What keygen did.
    enum Status: String, Encodable, RefusedOrFailed {
        /// A new key pair was written.
        case created
        /// The private key was there and is kept (its public key file written if missing).
        case existing
        /// The files there do not belong together: nothing was written.
        case refused
        /// The files could not be read or written.
        case failed

        /// What `SigningKeyFiles.generate` did.
        init(_ made: SigningKeyFiles.Status) {
            switch made {
            case .created: self = .created
            case .existing: self = .existing
            }
        }
    }

    var status: Status
    /// `NAME.pem`.
    var privateKey: String
    /// `NAME.pub.pem`.
    var publicKey: String
    /// The public key's PEM, when there is a key pair.
    @Nullable var publicKeyPEM: String? = nil
    var diagnostics: [Diagnostic]

    /// A key pair made or kept is a success.
    var outcome: Outcome {
        switch status {
        case .created, .existing: return .success
        case .refused: return .refused
        case .failed: return .failed
        }
    }
}
