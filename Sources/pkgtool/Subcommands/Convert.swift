import ArgumentParser
import Foundation
import PkgKitDiagnostics
import PkgKit

extension Pkgtool {
    /// `pkgtool convert`: content packages into Background Assets asset packs for `xcrun ba-package`.
    struct Convert: ReportingCommand {
        static let configuration = CommandConfiguration(
            commandName: "convert",
            abstract: "Convert packages into Background Assets asset packs.",
            discussion: """
            Validates every package first: if any is invalid nothing is converted. Writes, for each \
            product (the latest version given), DIR/<packID>/ with the package's ContentInfo.plist and \
            Contents/, and DIR/<packID>.json, the manifest for `xcrun ba-package`. The pack ID is the \
            product identifier with every character other than a letter or digit replaced by '-', runs \
            of '-' made one and '-' trimmed from both ends (App Store Connect accepts letters, digits and \
            inner hyphens only); products whose pack IDs would collide, also in letter case, are refused, \
            and so are two files of one pack whose names differ only in letter case or Unicode \
            normalization (ba-package runs on a Mac, whose disk would merge them). Prints the ba-package commands \
            to run in DIR and the product -> pack ID table, also written to DIR/README.txt. Other files \
            in DIR are left alone.
            """)

        @Argument(help: ArgumentHelp("The packages (.pkg: xar, zip, tar, flat installer package) or unpacked folders.", valueName: "PACKAGE"))
        var packages: [String]

        @Option(name: .customLong("to"), help: ArgumentHelp("What to convert to.", valueName: "FORMAT"))
        var target: ConvertTarget

        @Option(name: [.customLong("out"), .customShort("o"), .customLong("output")], help: ArgumentHelp("The folder to write the asset packs into (created with its parents when missing).", valueName: "DIR"))
        var destination: String

        @Option(name: .customLong("download-policy"), help: ArgumentHelp("When devices download the packs.", valueName: "POLICY"))
        var downloadPolicy: AssetPackDownloadPolicy = .onDemand

        @Option(name: .customLong("platform"), help: ArgumentHelp("A platform the packs are for, spelt exactly as listed; repeat for several (default: iOS).", valueName: "PLATFORM"))
        var platforms: [AssetPackPlatform] = []

        @OptionGroup var limit: LimitOptions
        @OptionGroup var outputOptions: OutputOptions
        @ParentCommand var root: Pkgtool

        var subject: String { destination }
        var leftWhenInterrupted: String { "nothing was converted; \(destination) is as it was" }

        /// The options for this run's flags.
        private func options(_ bar: ProgressBar? = nil, cancellation: Cancellation? = nil) -> ConvertOptions {
            var options = ConvertOptions(downloadPolicy: downloadPolicy, platforms: platforms, limits: limit.limits, cancellation: cancellation)
            if let bar { options.progress = { bar.update($0, of: $1) } }
            return options
        }

        func execute(_ output: OutputOptions, _ cancellation: Cancellation) throws -> ConvertReport {
            let bar = ProgressBar(enabled: !output.json && !output.quiet)
            defer { bar.finish() }
            return try AssetPackConverter(output: destination).convert(packages, options: options(bar, cancellation: cancellation))
        }

        func report(for failure: any DiagnosableError) -> ConvertReport {
            ConvertReport(status: ConvertStatus(failure), diagnostics: [failure.diagnostic])
        }

        func printText(_ report: ConvertReport, _ output: OutputOptions) {
            for package in report.packages where !package.diagnostics.isEmpty {
                Console.print(package.diagnostics, file: package.path, several: packages.count > 1, quiet: output.quiet)
                if !package.valid, !package.diagnostics.contains(where: { $0.code == .unreadableInput }) {
                    Console.err("\(package.path): invalid")
                }
            }
            Console.print(report.diagnostics, file: destination, quiet: output.quiet)
            guard report.status == .converted else {
                Console.err("nothing was converted: \(destination) is as it was")
                return
            }
            guard !output.quiet else { return }
            let platforms = options().manifestPlatforms.map(\.rawValue).joined(separator: " ")
            let noun = report.packs.count == 1 ? "product" : "products"
            Console.out("converted \(report.packs.count) \(noun) into \(destination) (download policy \(downloadPolicy.rawValue), platforms \(platforms)):")
            report.table.forEach(Console.out)
            for path in report.superseded {
                let left = report.packages.first { $0.path == path }
                guard let pack = report.packs.first(where: { $0.productIdentifier == left?.productIdentifier }) else { continue }
                Console.out("left out \(path) (\(left?.contentVersion ?? "?")): \(pack.contentVersion) from \(pack.package) is converted")
            }
            Console.out("")
            Console.out("Next, on a Mac with Xcode, run in \(destination) (also in \(destination)/\(AssetPackConverter.readmeName)):")
            report.commands.forEach(Console.out)
        }
    }
}

/// What `convert --to` converts into.
enum ConvertTarget: String, ExpressibleByArgument, CaseIterable {
    case backgroundAssets = "background-assets"
}

extension AssetPackDownloadPolicy: ExpressibleByArgument {}

extension AssetPackPlatform: ExpressibleByArgument {}
