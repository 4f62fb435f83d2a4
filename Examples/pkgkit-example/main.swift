import Foundation
import PkgKit

// An app's view of PkgKit, run from the command line: a `ContentLibrary` (the app's model)
// brings the content up to date while this program prints what a screen would show.

let arguments: Arguments
do {
    arguments = try Arguments(Array(CommandLine.arguments.dropFirst()))
} catch {
    FileHandle.standardError.write(Data("pkgkit-example: \(error.message)\n\n\(Arguments.usage)\n".utf8))
    exit(2)
}

guard #available(iOS 17, macOS 14, tvOS 17, *) else {
    FileHandle.standardError.write(Data("pkgkit-example: needs macOS 14\n".utf8))
    exit(1)
}

let library = ContentLibrary(catalogURL: arguments.catalogURL, folder: arguments.folder, trust: arguments.trust)
library.onProgress = { step in
    let percent = String(format: "%5.1f%%", step.fraction * 100)
    print("progress \(percent) \(step.phase.rawValue) \(step.productIdentifier ?? "-") bytes \(step.bytesDone)/\(step.bytesTotal) files \(step.filesDone)/\(step.filesTotal)")
    if let limit = arguments.cancelAfterBytes, step.bytesDone >= limit {
        library.cancel()
    }
}

// Content an earlier version of the app already downloaded (the folder SKDownload delivered) is
// taken over before the first update, as an installed version, so that the update downloads
// only what differs.
if let (folder, version) = arguments.adopt, let product = arguments.products.first {
    await library.adopt(folder, as: version, of: product)
    guard let adopted = library.report?.products.first else {
        print("cancelled: nothing was adopted")
        exit(3)
    }
    print("adopted \(adopted.status.rawValue) \(product) \(version) downloaded \(adopted.bytesDownloaded)")
    for diagnostic in adopted.diagnostics {
        print("  \(diagnostic.severity.rawValue)[\(diagnostic.code.rawValue)] \(diagnostic.message)")
    }
}

await library.update(arguments.products)

guard let report = library.report else {
    print("cancelled: what was downloaded is kept, and the next run resumes it")
    exit(3)
}
for product in report.products {
    let version = product.contentVersion ?? "-"
    let resumed = product.resumedFrom.map { ", resumed from \($0)" } ?? ""
    print("\(product.status.rawValue) \(product.productIdentifier) \(version) downloaded \(product.bytesDownloaded)\(resumed)"
          + (library.folder(of: product.productIdentifier).map { " at \($0.path)" } ?? ""))
    for diagnostic in product.diagnostics {
        print("  \(diagnostic.severity.rawValue)[\(diagnostic.code.rawValue)] \(diagnostic.message)")
    }
}
exit(report.products.allSatisfy { $0.status == .installed || $0.status == .unchanged } && report.diagnostics.isEmpty ? 0 : 1)
