import ArgumentParser
import PkgKitDiagnostics
import PkgKit

/// A failure the command line finds itself (PkgKit's own errors report themselves): a diagnostic
/// and whether it is a refusal or a failure, like every `DiagnosableError`.
struct CommandFailure: DiagnosableError {
    var diagnostic: Diagnostic
    var disposition: ErrorDisposition

    /// A failure with `code` on `path`; refused or failed as the code says unless told.
    init(_ code: DiagnosticCode, path: String?, _ message: String, disposition: ErrorDisposition? = nil) {
        diagnostic = Diagnostic(code, path: path, message)
        self.disposition = disposition ?? code.disposition
    }

    /// The same failure as `error`.
    init(_ error: any DiagnosableError) {
        diagnostic = error.diagnostic
        disposition = error.disposition
    }

    /// `error` as a failure of the work: itself when it reports itself, else an `unreadable-input`
    /// failure in its own words. nil for what is no failure of the work: an interruption
    /// (`Interruption` says it), and what is the argument parser's to say (usage errors, exit
    /// statuses, help).
    static func diagnosable(_ error: any Error) -> (any DiagnosableError)? {
        switch error {
        case let error as any DiagnosableError: return error
        case is OperationCancelled, is ExitCode, is ValidationError, is CleanExit, is UsageError: return nil
        default: return CommandFailure(.unreadableInput, path: nil, "\(error)")
        }
    }
}
