import Foundation
import PkgKit

// portability-check DOCUMENTS PACKAGE [OTHER...]
// Installs PACKAGE as an app would (the README's snippet), then reports what the core alone says
// of each OTHER package: one line per diagnostic code.
let arguments = CommandLine.arguments.dropFirst()
guard arguments.count >= 2 else {
    FileHandle.standardError.write(Data("usage: portability-check DOCUMENTS PACKAGE [OTHER...]\n".utf8))
    exit(64)
}
let documents = URL(fileURLWithPath: arguments[arguments.startIndex])
let downloadedPackage = URL(fileURLWithPath: arguments[arguments.startIndex + 1])

// The README's five lines.
let report = try Installer(documents: documents).install(downloadedPackage)
guard report.status != .refused else { fatalError("refused: \(report.diagnostics.map(\.message))") }
let folder = URL(fileURLWithPath: report.installedPath!)   // Documents/<IAPProductIdentifier>/<ContentVersion>
print("installed \(report.productIdentifier ?? "?") \(report.contentVersion ?? "?") at \(folder.path)")

for other in arguments.dropFirst(2) {
    let check = try PackageCheck.run(other, context: RuleContext(purpose: .validate))
    for diagnostic in check.diagnostics {
        print("\(other): \(diagnostic.code.rawValue): \(diagnostic.message)")
    }
}
