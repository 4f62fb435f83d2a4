import ArgumentParser
import PkgKit

extension Pkgtool {
    /// `pkgtool inspect`: what a package holds.
    struct Inspect: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show a package's product, version, format, compression and files.",
            discussion: "With --files, every entry with its type, size, stored size and sha1 of its unpacked bytes.")

        @Argument(help: "A package or unpacked folder.") var package: String
        @Flag(help: "List every entry.") var files = false
        @OptionGroup var limit: LimitOptions
        @OptionGroup var outputOptions: OutputOptions

        func run() throws {
            let report: InspectReport
            do {
                report = try InspectReport.make(package, limits: limit.limits, withFiles: files)
            } catch let error as ReadError {
                throw Console.fail(describe(error))
            }
            if outputOptions.json {
                Console.json(report)
                return
            }
            guard !outputOptions.quiet else { return }
            Console.out("""
            \(report.path)
              product      \(report.productIdentifier ?? "-")
              version      \(report.contentVersion ?? "-")
              format       \(report.format?.rawValue ?? "-")
              compression  \(report.compression ?? "-")
              checksum     \(report.checksum ?? "-")
              files        \(report.fileCount)
              payload      \(report.payloadBytes) bytes
              archive      \(report.archiveBytes.map { "\($0) bytes" } ?? "-")
            """)
            for file in report.files ?? [] {
                let stored = file.storedSize.map(String.init) ?? "-"
                Console.out("  \(file.type.rawValue.padding(toLength: 9, withPad: " ", startingAt: 0)) \(String(file.size).leftPad(12)) \(stored.leftPad(12)) \(file.sha1 ?? String(repeating: " ", count: 40)) \(file.path)")
            }
        }
    }
}

extension String {
    func leftPad(_ width: Int) -> String { count >= width ? self : String(repeating: " ", count: width - count) + self }
}
