import ArgumentParser
import PkgKitDiagnostics
import PkgKit

extension Pkgtool {
    /// `pkgtool diff`: what an update changes, and whether it is a proper update.
    struct Diff: AsyncReportingCommand {
        static let configuration = CommandConfiguration(
            commandName: "diff",
            abstract: "Compare two versions of a package by content.",
            discussion: """
            Reads both packages in full, checksums verified, and lists files added, removed and \
            changed (by sha1 of their bytes) after a verdict: ok, version-not-bumped, \
            content-unchanged or product-identifier-mismatch; invalid when either package is damaged \
            or breaks a rule (its errors are printed). A last line counts the files and bytes added, \
            removed and changed, and what a device that has OLD installed downloads to get NEW (as \
            sync --check counts it). Exit 0 for ok, 1 otherwise, 2 when a path is missing or unreadable.
            """)

        @ParentCommand var root: Pkgtool
        @Argument(help: "The older package or folder.") var old: String
        @Argument(help: "The newer package or folder.") var new: String
        @OptionGroup var limit: LimitOptions
        @OptionGroup var outputOptions: OutputOptions

        var subject: String { old }
        var leftWhenInterrupted: String { "nothing was changed" }
        var interruptionGrace: Double { 1 }

        func execute(_ output: OutputOptions, _ cancellation: Cancellation) async throws -> DiffReport {
            try await DiffReport.compare(old, new, limits: limit.limits, cancellation: cancellation)
                .addingDownload(limits: limit.limits, cancellation: cancellation)
        }

        func printText(_ report: DiffReport, _ output: OutputOptions) {
            for side in [report.old, report.new] where !side.diagnostics.isEmpty {
                Console.print(side.diagnostics, file: side.path, several: true, quiet: output.quiet)
                guard !output.quiet else { continue }
                if side.diagnostics.contains(where: { $0.code == .unreadableInput }) {
                    Console.err("\(side.path): cannot be read: not compared")
                } else {
                    Console.err("\(side.path): invalid (\(Console.count(side.diagnostics.count, "error"))): not compared")
                }
            }
            guard !output.quiet else { return }
            // The verdict first: what a user (or a log) needs is not under hundreds of lines.
            Console.out("verdict: \(report.verdict.rawValue)")
            if let oldID = report.old.productIdentifier, let oldVersion = report.old.contentVersion,
               let newID = report.new.productIdentifier, let newVersion = report.new.contentVersion {
                Console.out("\(oldID) \(oldVersion) -> \(newID) \(newVersion)")
            }
            guard report.verdict != .invalid else { return }
            for path in report.added { Console.out("+ \(path)") }
            for path in report.removed { Console.out("- \(path)") }
            for path in report.changed { Console.out("~ \(path)") }
            Console.out(Self.summary(report))
            if let download = report.downloadBytes, let oldVersion = report.old.contentVersion {
                Console.out("update from \(oldVersion): \(ByteSize.counted(download)) to download")
            }
        }

        /// `2 files added (10 bytes), 1 removed (4 bytes), 3 changed (2000000 bytes (2.0 MB) now)`.
        static func summary(_ report: DiffReport) -> String {
            "\(Console.count(report.added.count, "file")) added (\(ByteSize.counted(report.addedBytes))), "
                + "\(report.removed.count) removed (\(ByteSize.counted(report.removedBytes))), "
                + "\(report.changed.count) changed (\(ByteSize.counted(report.changedBytes)) now)"
        }

        func report(for failure: any DiagnosableError) -> DiffReport {
            DiffReport(invalid: DiffReport.Side(unreadable: old, failure.diagnostic), DiffReport.Side(unreadable: new, failure.diagnostic))
        }
    }
}
