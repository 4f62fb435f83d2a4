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

        func run() throws {
            let interrupt = InterruptFlag()
            let bar = ProgressBar(enabled: !outputOptions.json && !outputOptions.quiet)
            let options = ConvertOptions(downloadPolicy: downloadPolicy, platforms: platforms, limits: limit.limits,
                                         progress: { bar.update($0, of: $1) }, isCancelled: { interrupt.received != 0 })
            let report: ConvertReport
            do {
                defer { bar.finish() }
                report = try AssetPackConverter(output: output).convert(packages, options: options)
            } catch ConvertError.cancelled {
                Console.err("pkgtool: interrupted: nothing was converted, \(output) is as it was")
                throw ExitCode(128 + interrupt.received)
            }
            if outputOptions.json {
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
                Console.print(package.diagnostics, quiet: outputOptions.quiet)
                if !package.valid, !package.diagnostics.contains(where: { $0.code == .unreadableInput }) {
                    Console.err("\(package.path): invalid")
                }
            }
            Console.print(report.diagnostics, quiet: outputOptions.quiet)
            guard report.status == .converted else {
                Console.err("nothing was converted: \(output) is as it was")
                return
            }
            guard !outputOptions.quiet else { return }
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

/// SIGINT and SIGTERM as a flag that a long operation polls, so that it can remove what it
/// staged before the process exits (with 128 + the signal's number). An operation that does not
/// stop within `grace` seconds (blocked opening a FIFO, say) is ended then, so that Ctrl-C
/// always works; what it staged is removed by the next run.
// Unchecked: `signal` is touched only under `lock`; `sources` only in `init`.
final class InterruptFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var signal: Int32 = 0
    private var sources: [DispatchSourceSignal] = []

    init(grace: Double = 5) {
        for number in [SIGINT, SIGTERM] {
            // Delivered to the dispatch source instead of ending the process.
            Foundation.signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [self] in
                lock.withLock { if signal == 0 { signal = number } }
                DispatchQueue.global().asyncAfter(deadline: .now() + grace) {
                    Console.err("pkgtool: interrupted")
                    exit(128 + number)
                }
            }
            source.resume()
            sources.append(source)
        }
    }

    /// The first signal received, or 0.
    var received: Int32 { lock.withLock { signal } }
}
