import ArgumentParser
import Foundation
import PkgKit

extension Pkgtool {
    /// `pkgtool convert`: content packages into Background Assets asset packs for `xcrun ba-package`.
    struct Convert: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Convert packages into Background Assets asset packs.",
            discussion: """
            Validates every package first: if any is invalid nothing is converted. Writes, for each \
            product (the latest version given), DIR/<packID>/ with the package's ContentInfo.plist and \
            Contents/, and DIR/<packID>.json, the manifest for `xcrun ba-package`. The pack ID is the \
            product identifier with every '.' and '_' replaced by '-'. Prints the ba-package commands \
            to run in DIR and the product -> pack ID table, also written to DIR/README.txt. Other files \
            in DIR are left alone.
            """)

        @Argument(help: ArgumentHelp("The packages (.pkg: xar, zip, tar, flat installer package) or unpacked folders.", valueName: "PACKAGE"))
        var packages: [String]

        @Option(name: .customLong("to"), help: ArgumentHelp("What to convert to: background-assets.", valueName: "FORMAT"))
        var target: ConvertTarget

        @Option(name: .customLong("out"), help: ArgumentHelp("The folder to write the asset packs into (created when missing).", valueName: "DIR"))
        var output: String

        @Option(name: .customLong("download-policy"), help: ArgumentHelp("When devices download the packs: on-demand (default), prefetch or essential.", valueName: "POLICY"))
        var downloadPolicy: AssetPackDownloadPolicy = .onDemand

        @Option(name: .customLong("platform"), help: ArgumentHelp("A platform the packs are for: iOS (default), macOS, tvOS or visionOS; repeat for several.", valueName: "PLATFORM"))
        var platforms: [AssetPackPlatform] = []

        @OptionGroup var limit: LimitOptions
        @OptionGroup var outputOptions: OutputOptions
        @ParentCommand var root: Pkgtool

        /// `--json` and `--quiet`, given before or after the command name.
        var printing: OutputOptions { outputOptions.merged(with: root.outputOptions) }

        func run() throws {
            Interruption.install()
            let bar = ProgressBar(enabled: !printing.json && !printing.quiet)
            let options = ConvertOptions(downloadPolicy: downloadPolicy, platforms: platforms, limits: limit.limits,
                                         progress: { bar.update($0, of: $1) }, cancellation: Interruption.cancellation)
            let report: ConvertReport
            do {
                defer { bar.finish() }
                report = try AssetPackConverter(output: output).convert(packages, options: options)
            } catch is OperationCancelled {
                Console.err("pkgtool: interrupted: nothing was converted, \(output) is as it was")
                throw Interruption.exitCode
            }
            if printing.json {
                Console.json(report)
            } else {
                printText(report, options: options)
            }
            switch report.status {
            case .converted: return
            case .refused: throw ExitCode.failure
            case .failed: throw ExitCode(2)
            }
        }

        private func printText(_ report: ConvertReport, options: ConvertOptions) {
            for package in report.packages where !package.diagnostics.isEmpty {
                Console.print(package.diagnostics, quiet: printing.quiet)
                if !package.valid, !package.diagnostics.contains(where: { $0.code == .unreadableInput }) {
                    Console.err("\(package.path): invalid")
                }
            }
            Console.print(report.diagnostics, quiet: printing.quiet)
            guard report.status == .converted else {
                Console.err("nothing was converted: \(output) is as it was")
                return
            }
            guard !printing.quiet else { return }
            let platforms = options.manifestPlatforms.map(\.rawValue).joined(separator: " ")
            let noun = report.packs.count == 1 ? "product" : "products"
            Console.out("converted \(report.packs.count) \(noun) into \(output) (download policy \(downloadPolicy.manifestKey), platforms \(platforms)):")
            report.table.forEach(Console.out)
            for path in report.superseded {
                let left = report.packages.first { $0.path == path }
                guard let pack = report.packs.first(where: { $0.productIdentifier == left?.productIdentifier }) else { continue }
                Console.out("left out \(path) (\(left?.contentVersion ?? "?")): \(pack.contentVersion) from \(pack.package) is converted")
            }
            Console.out("")
            Console.out("Next, on a Mac with Xcode, run in \(output) (also in \(output)/\(AssetPackConverter.readmeName)):")
            report.commands.forEach(Console.out)
        }
    }
}

/// What `convert --to` converts into.
enum ConvertTarget: String, ExpressibleByArgument, CaseIterable {
    case backgroundAssets = "background-assets"
}

extension AssetPackDownloadPolicy: ExpressibleByArgument {}

extension AssetPackPlatform: ExpressibleByArgument {
    public init?(argument: String) { self.init(name: argument) }
}
