import PkgKitSupport
import PkgKitDiagnostics
import PkgKitFormat
import PkgKitChecking
import PkgKitReports

extension DiffReport {
    /// Compares `old` with `new` (`pkgtool diff`): each is read whole, checksums verified, and
    /// checked by every rule with `limits`. A side that cannot be read is the verdict's reason
    /// (`invalid`), with its failure as its diagnostic; only a cancellation is thrown.
    public static func compare(_ old: String, _ new: String, limits: PackageLimits = PackageLimits(),
                               cancellation: Cancellation? = nil) throws -> DiffReport {
        let context = RuleContext(purpose: .validate, limits: limits)
        return try compare(old, new) { try PackageCheck.run($0, context: context, cancellation: cancellation) }
    }

    /// The report on `old` and `new`, each read whole by `check`. Whatever `check` throws for a
    /// side, other than a cancellation, is that side's diagnostic: a `DiagnosableError`'s own,
    /// any other error as `unreadable-input` in its own words.
    public static func compare(_ old: String, _ new: String, check: (String) throws -> PackageCheck) throws -> DiffReport {
        var checks: [PackageCheck] = [], sides: [Side] = []
        for path in [old, new] {
            do {
                let checked = try check(path)
                checks.append(checked)
                sides.append(Side(checked))
            } catch let cancelled as OperationCancelled {
                throw cancelled
            } catch let error as any DiagnosableError {
                sides.append(Side(unreadable: path, error.diagnostic))
            } catch {
                sides.append(Side(unreadable: path, Diagnostic(.unreadableInput, path: nil, "\(error)")))
            }
        }
        if checks.count == 2 { return DiffReport(old: checks[0], new: checks[1]) }
        return DiffReport(invalid: sides[0], sides[1])
    }
}
