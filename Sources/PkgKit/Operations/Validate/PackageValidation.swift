import PkgKitDiagnostics
import PkgKitChecking
import PkgKitReports

extension ValidationReport {
    /// Checks every package of `request` by every rule (`pkgtool validate`), against the previous
    /// package or version when one is given. A package that cannot be read is listed all the
    /// same, unchecked, with its failure. `progress` is told the bytes read of the package being
    /// checked; `checked` is handed each package's report as soon as it is done, to reword or
    /// show it. Throws when the previous package cannot be used (`ValidationFailure`,
    /// `ReadError`), or `OperationCancelled`.
    public static func make(_ request: ValidationRequest, progress: ((Int64, Int64) -> Void)? = nil,
                            checked: (inout PackageReport) -> Void = { _ in }) throws -> ValidationReport {
        var context = RuleContext(purpose: .validate, limits: request.limits, expectedProductIdentifier: request.productIdentifier)
        if let version = request.previousVersion {
            context.previous = PreviousPackage(productIdentifier: nil, contentVersion: version)
        }
        if let previous = request.previous {
            let old = try PackageCheck.run(previous, context: RuleContext(purpose: .validate, limits: request.limits),
                                           cancellation: request.cancellation)
            guard let asPrevious = old.asPrevious else { throw ValidationFailure(previous: previous) }
            context.previous = asPrevious
        }
        var reports: [PackageReport] = []
        for path in request.paths {
            var report: PackageReport
            do {
                // Contents are compared only against a previous package; otherwise the container's
                // own checksums are verified by reading, and hashing again would be wasted.
                let check = try PackageCheck.run(path, context: context, digests: context.previous?.payloadDigests != nil,
                                                 cancellation: request.cancellation, progress: progress)
                report = PackageReport(check, strict: request.strict)
            } catch let error as any DiagnosableError {
                // Listed all the same: a script reading `valid` must not pass over it.
                report = PackageReport(unchecked: path, diagnostics: [error.diagnostic])
            }
            checked(&report)
            reports.append(report)
        }
        return ValidationReport(packages: reports)
    }
}
