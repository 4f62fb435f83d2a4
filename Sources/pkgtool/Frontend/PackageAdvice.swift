import PkgKitDiagnostics
import PkgKit

/// Advice about a package that names pkgtool's own commands, which PkgKit's messages leave to
/// the front end: how to make a content package (.pkg, xar) from an archive of another kind.
enum PackageAdvice {
    /// The command that makes a .pkg from the package at `path`, quoted for a shell.
    static func createCommand(_ path: String) -> String {
        "`pkgtool create \(shellQuoted(path))`"
    }

    /// `report` with its `bad-extension` finding, when it says that a .pkg must be made from the
    /// package, ending in the command that makes one.
    static func worded(_ report: PackageReport) -> PackageReport {
        var report = report
        report.diagnostics = worded(report.diagnostics, package: report.path)
        return report
    }

    /// `diagnostics` of the package at `path`, worded as `worded(_:)` says.
    static func worded(_ diagnostics: [Diagnostic], package path: String) -> [Diagnostic] {
        diagnostics.map { diagnostic in
            guard diagnostic.code == .badExtension, diagnostic.message.hasSuffix(BadExtensionRule.makeOne) else { return diagnostic }
            var worded = diagnostic
            worded.message += " with \(createCommand(path))"
            return worded
        }
    }

    /// `path` as a shell word: as it is when it holds nothing a shell would read otherwise,
    /// else in single quotes.
    static func shellQuoted(_ path: String) -> String {
        let plain = path.unicodeScalars.allSatisfy { scalar in
            scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "-_./+@%:,=".unicodeScalars.contains(scalar)
        }
        guard !plain || path.isEmpty else { return path }
        return "'" + path.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
    }
}
