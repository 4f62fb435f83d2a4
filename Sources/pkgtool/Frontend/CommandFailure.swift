import ArgumentParser
import PkgKit

/// Why a command could not do its work: the one diagnostic its report carries, and the exit
/// status (2: input missing or unreadable, I/O error; 1: a package that cannot be read as one).
struct CommandFailure: Error {
    var diagnostic: Diagnostic
    var status: Int32

    init(_ code: DiagnosticCode, _ message: String, status: Int32 = 2) {
        diagnostic = Diagnostic(code, path: nil, message)
        self.status = status
    }

    /// The failure `error` stands for; nil for errors that are not a failure of the work
    /// (usage errors, exit statuses), which go on to the argument parser.
    init?(_ error: any Error) {
        switch error {
        case let failure as CommandFailure:
            self = failure
        case let error as ReadError:
            self.init(error)
        case let error as InstallError:
            self.init(.ioError, error.description)
        case let failure as CreateFailure:
            switch failure.kind {
            case .unreadableInput: self.init(.unreadableInput, failure.message)
            case .io: self.init(.ioError, failure.message)
            case .usage: return nil
            }
        default:
            return nil
        }
    }

    /// A read failure: missing or unreadable input (exit 2), or a package that breaks off in a
    /// way its reader reports before the scan (exit 1, with the rule's code).
    init(_ error: ReadError) {
        self.init(error.code, error.description, status: error.code == .unreadableInput ? 2 : 1)
    }
}
