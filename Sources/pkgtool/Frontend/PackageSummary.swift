import PkgKitDiagnostics
import PkgKit

/// The line that sums up one package after its diagnostics: validate's for each package, and
/// inspect's for one it cannot describe, so that a damaged package reads the same in both.
enum PackageSummary {
    /// `PATH: valid — com.x 1.0, xar, 10 files, 21 bytes; 0 errors, 0 warnings`, or what stopped
    /// the package from being judged: an input that cannot be read, a container that cannot be
    /// read whole (its partial counts would mislead). `strict` says that warnings made it invalid.
    static func line(path: String, valid: Bool, format: PackageFormat?, wrapper: String? = nil,
                     productIdentifier: String?, contentVersion: String?, fileCount: Int, payloadBytes: Int64,
                     diagnostics: [Diagnostic], strict: Bool = false) -> String {
        let codes = Set(diagnostics.filter { $0.severity == .error }.map(\.code))
        if codes.contains(.unreadableInput) { return "\(path): not checked — it cannot be read" }
        let tally = Console.tally(diagnostics)
        if codes.contains(.unreadableArchive) {
            let what = format.map { "a \($0.rawValue) that cannot be read whole" } ?? "not a package"
            return "\(path): INVALID — \(what); \(tally)"
        }
        var facts: [String] = []
        if productIdentifier != nil || contentVersion != nil {
            facts.append("\(productIdentifier ?? "?") \(contentVersion ?? "?")")
        }
        if let format {
            facts.append(format.rawValue + (wrapper.map { " wrapped in \($0)/" } ?? ""))
            facts.append("\(Console.count(fileCount, "file")), \(ByteSize.counted(payloadBytes))")
        }
        var verdict = valid ? "valid" : "INVALID"
        if !valid, strict, codes.isEmpty { verdict += " (--strict: warnings count as errors)" }
        return "\(path): \(verdict) — " + (facts.isEmpty ? tally : facts.joined(separator: ", ") + "; " + tally)
    }

    /// `line` for a package in validate's report.
    static func line(_ report: PackageReport, strict: Bool) -> String {
        line(path: report.path, valid: report.valid, format: report.format, wrapper: report.wrapper,
             productIdentifier: report.productIdentifier, contentVersion: report.contentVersion,
             fileCount: report.fileCount, payloadBytes: report.payloadBytes, diagnostics: report.diagnostics, strict: strict)
    }
}
