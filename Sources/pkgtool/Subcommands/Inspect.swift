import ArgumentParser
import PkgKitDiagnostics
import PkgKit
import Foundation

extension Pkgtool {
    /// `pkgtool inspect`: what a package holds.
    struct Inspect: ReadOnlyCommand {
        static let configuration = CommandConfiguration(
            commandName: "inspect",
            abstract: "Show a package's product, version, format, compression and files.",
            discussion: """
            Reads the table of contents, not the data, but checks that the container is whole: a \
            truncated or corrupt container, or bytes that are no archive, are unreadable-archive \
            (exit 1). With --files, every entry with its type, size, stored size and sha1 of its \
            unpacked bytes.
            """)

        @ParentCommand var root: Pkgtool
        @Argument(help: "A package or unpacked folder.") var package: String
        @Flag(help: "List every entry.") var files = false
        @OptionGroup var limit: LimitOptions
        @OptionGroup var outputOptions: OutputOptions

        var subject: String { package }

        func execute(_ output: OutputOptions, _ cancellation: Cancellation) throws -> InspectReport {
            try InspectReport.make(package, limits: limit.limits, withFiles: files)
        }

        func printText(_ report: InspectReport, _ output: OutputOptions) {
            Console.print(report.diagnostics, file: package, quiet: output.quiet)
            guard !output.quiet else { return }
            guard report.isWhole else {
                // Nothing to list of a package that could not be read whole, or is none: said
                // as validate says it.
                Console.out(PackageSummary.line(path: report.path, valid: false, format: report.format, wrapper: report.wrapper,
                                                productIdentifier: report.productIdentifier, contentVersion: report.contentVersion,
                                                fileCount: report.fileCount, payloadBytes: report.payloadBytes,
                                                diagnostics: report.diagnostics))
                return
            }
            printDescription(report)
        }

        func report(for failure: any DiagnosableError) -> InspectReport {
            InspectReport(path: package, diagnostics: [failure.diagnostic])
        }

        private func printDescription(_ report: InspectReport) {
            Console.out("""
            \(report.path)
              product      \(report.productIdentifier ?? "-")
              version      \(report.contentVersion ?? "-")
              format       \(report.format?.rawValue ?? "-")
              wrapper      \(report.wrapper.map { $0 + "/" } ?? "-")
              compression  \(report.compression ?? "-")
              checksum     \(report.checksum ?? "-")
              files        \(report.fileCount)
              payload      \(ByteSize.counted(report.payloadBytes))
              archive      \(report.archiveBytes.map(ByteSize.counted) ?? "-")
            """)
            guard let entries = report.files else { return }
            func row(_ type: String, _ size: String, _ stored: String, _ sha1: String, _ path: String) -> String {
                "  \(type.padding(toLength: 9, withPad: " ", startingAt: 0)) \(size.leftPad(12)) \(stored.leftPad(12)) \(sha1.padding(toLength: 40, withPad: " ", startingAt: 0)) \(path)"
            }
            Console.out(row("type", "size", "stored", "sha1", "path"))
            for file in entries {
                Console.out(row(file.type.rawValue, String(file.size), file.storedSize.map(String.init) ?? "-", file.sha1 ?? "", file.path))
            }
        }
    }
}

extension String {
    func leftPad(_ width: Int) -> String { count >= width ? self : String(repeating: " ", count: width - count) + self }
}
