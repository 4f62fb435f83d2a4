import PkgKitDiagnostics
import PkgKit

/// The command line's advice on a network failure PkgKit reports: PkgKit says what went wrong
/// in plain words and carries the typed failure; the advice that names a flag (`--ca-cert`,
/// `--timeout`) is worded here, and only a failure that may pass by itself is told to run again.
struct TransportAdvice {
    /// The `--ca-cert` files given.
    var caCerts: [String]

    /// True when running again may help: a transient failure (a reset, a timeout, an
    /// unreachable server, HTTP 5xx), or one that is not the network's (a full disk, a busy
    /// download). A 4xx, a certificate that does not verify or a bad URL stay as they are.
    static func retryMayHelp(_ failure: TransportError?) -> Bool {
        failure?.isTransient ?? true
    }

    /// `failure`'s message with the command line's advice, or nil when PkgKit's words are all.
    func message(for failure: TransportError) -> String? {
        switch failure {
        case .tls(_, _, .unknownIssuer) where caCerts.isEmpty:
            return failure.message + ": if it is a private CA (a staging server's), pass its certificate with --ca-cert FILE, "
                + "or install the CA in the system's trust store"
        case .tls(_, _, .unknownIssuer):
            return failure.message + ", nor by one in " + caCerts.joined(separator: ", ")
                + ": check that --ca-cert names the CA that signed the server's certificate"
        case .timedOut:
            return failure.message + "; --timeout sets how long"
        default:
            return nil
        }
    }

    /// `report` with the advice in the diagnostics its transport failures made.
    func advising(_ report: SyncReport) -> SyncReport {
        var report = report
        report.diagnostics = advising(report.diagnostics, report.transportFailure)
        for index in report.products.indices {
            report.products[index].diagnostics = advising(report.products[index].diagnostics, report.products[index].transportFailure)
        }
        return report
    }

    /// The diagnostic `failure` made, advised; the others as they are.
    private func advising(_ diagnostics: [Diagnostic], _ failure: TransportError?) -> [Diagnostic] {
        guard let failure, let advised = message(for: failure) else { return diagnostics }
        return diagnostics.map { diagnostic in
            guard diagnostic.path == failure.url, diagnostic.code == failure.diagnostic.code else { return diagnostic }
            var changed = diagnostic
            changed.message = advised
            return changed
        }
    }
}
