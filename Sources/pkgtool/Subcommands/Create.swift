import ArgumentParser
import Foundation
import PkgKitDiagnostics
import PkgKitIdentity
import PkgKit

extension Pkgtool {
    /// `pkgtool create`: a folder (and plist) into a reproducible package.
    struct Create: ReportingCommand {
        static let configuration = CommandConfiguration(
            commandName: "create",
            abstract: "Build a reproducible content package from a folder or from another package.",
            discussion: """
            SOURCE holding a Contents/ folder is the package root, with its ContentInfo.plist or one \
            made from --product-id and --content-version (or --plist); anything else at its root is \
            outside-contents. Any other folder becomes Contents/. SOURCE may also be a package \
            file: a .pkg, a zip (as Finder's Compress makes one, wrapping folder and all), a tar \
            or a productbuild installer package; it is read in full, checked, and written anew as \
            the canonical .pkg (xar), which devices can read in part. Every rule is checked \
            first: on any error nothing is written. \
            The output appears atomically and an existing file is replaced only on success, never \
            the --previous package. Timestamps come from SOURCE_DATE_EPOCH (else 0).
            """)

        @ParentCommand var root: Pkgtool

        @Argument(help: "The content folder, or a package to rebuild (.pkg, .zip, .tar, installer package).")
        var source: String

        @Option(name: .shortAndLong, help: ArgumentHelp("The package to write, or a folder to write it into (default: ./<IAPProductIdentifier>-<ContentVersion>.pkg).", valueName: "OUT.pkg"))
        var output: String?

        @Option(help: ArgumentHelp("A ContentInfo.plist to use instead of the source's own.", valueName: "FILE"))
        var plist: String?

        @Option(name: .customLong("product-id"), help: ArgumentHelp("The IAPProductIdentifier: fills in or must agree with the plist.", valueName: "ID"))
        var productIdentifier: String?

        @Option(name: .customLong("content-version"), help: ArgumentHelp("The ContentVersion: fills in or must agree with the plist.", valueName: "V"))
        var contentVersion: String?

        @Option(help: ArgumentHelp("The package (or unpacked folder) this one updates: same product id, greater version.", valueName: "OLD"))
        var previous: String?

        @Option(help: ArgumentHelp("Compute the version by bumping this part of --previous's (or the plist's).", valueName: "PART"))
        var bump: ContentVersion.Part?

        @Option(help: "How file data is stored: auto compresses with zlib but stores data that does not shrink (JPEG, PNG, video, zip…).")
        var compression: CompressionMode = .auto

        @Option(help: ArgumentHelp("Compression level: 1-3 fastest, about 5% larger; 4 faster than 5, but up to 15% larger on text in records; 5 (default) no larger than zlib's level 6, about four times faster than bsdtar; 6 under 1% smaller, a tenth slower; 7-9 up to 4% smaller, several times slower.", valueName: "1-9"))
        var level: Int32?

        @Option(help: "The container: devices read the usual .pkg in part, but always download a zip whole.")
        var format: OutputFormat = .xar

        @Option(help: ArgumentHelp("Compression threads (default: all cores). The output is the same for every value.", valueName: "N"))
        var jobs: Int?

        @Flag(name: .customLong("no-chunks"), help: "Do not cut files of 1 MiB and more into chunks. Chunks let sync download only the changed parts of a large file; without them it downloads every changed file whole.")
        var noChunks = false

        @Flag(name: .customLong("no-coalesce"), help: "Store every file's bytes, even where an earlier file has the same ones. Otherwise identical files share their bytes in the package, so that they are downloaded once; libarchive (bsdtar) then reads the package from a file, not from a pipe.")
        var noCoalesce = false

        @OptionGroup var limit: LimitOptions
        @OptionGroup var outputOptions: OutputOptions

        var subject: String { source }
        var leftWhenInterrupted: String { "nothing was written" + (output.map { ", \($0) is as it was" } ?? "") }
        /// The scratch files are unnamed until the package is complete: stopping at any point
        /// leaves nothing, so there is no cleaning up to wait for.
        var interruptionGrace: Double { 1 }

        func validate() throws {
            if let level, !(1...9).contains(level) { throw ValidationError("--level must be 1 to 9, not \(level)") }
            if let jobs, jobs < 1 { throw ValidationError("--jobs must be at least 1") }
            if bump != nil && contentVersion != nil {
                throw ValidationError("--bump computes the version; do not also give --content-version")
            }
        }

        func execute(_ output: OutputOptions, _ cancellation: Cancellation) throws -> CreateResult {
            var options = WriteOptions(format: format, compression: compression, level: level ?? WriteOptions.defaultLevel,
                                       jobs: jobs ?? ProcessInfo.processInfo.activeProcessorCount,
                                       timestamp: WriteOptions.timestampFromEnvironment())
            options.chunks = !noChunks
            options.coalesce = !noCoalesce
            let request = CreateRequest(source: source, output: self.output, plist: plist, productIdentifier: productIdentifier,
                                        contentVersion: contentVersion, previous: previous, bump: bump,
                                        options: options, limits: limit.limits, cancellation: cancellation)
            let bar = ProgressBar(enabled: !output.json && !output.quiet)
            defer { bar.finish() }
            return try PackageCreator.create(request) { bar.update($0, of: $1) }
        }

        func printText(_ result: CreateResult, _ output: OutputOptions) {
            Console.print(result.diagnostics, file: source, quiet: output.quiet)
            guard let written = result.output else {
                Console.err("create: \(Console.tally(result.diagnostics)); nothing was written")
                return
            }
            guard !output.quiet else { return }
            Console.out("""
            created \(written)
              product     \(result.productIdentifier ?? "-")
              version     \(result.contentVersion ?? "-")
              format      \(result.format.rawValue)
              files       \(result.fileCount)
              payload     \(ByteSize.counted(result.payloadBytes))
              package     \(ByteSize.counted(result.archiveBytes ?? 0))
              sha256      \(result.sha256 ?? "-")
            """)
        }

        /// What create's request gets wrong is for the command line a usage error: `--bump` has
        /// nothing to start from, the output is the `--previous` package or the source itself.
        func usageProblem(in error: any Error) -> String? {
            guard let failure = error as? CreateFailure else { return nil }
            let diagnostic = failure.diagnostic
            let message = diagnostic.message(in: Console.wording)
            switch failure {
            case .outputIsSource(let path), .outputIsPrevious(let path): return "\(path) \(message)"
            case .nothingToBump, .bumpWithContentVersion: return message
            case .unreadableInput, .cannotWrite: return nil
            }
        }

        func report(for failure: any DiagnosableError) -> CreateResult {
            CreateResult(failed: format, by: failure)
        }
    }
}
