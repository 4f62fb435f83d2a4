import Foundation
import PkgKit
import PkgKitArchive

/// Feeds one input to everything `validate` and `extract` run on an untrusted file: the format
/// detection, the readers (pkgtool's xar reader; libarchive for zip, tar, other xar encodings and
/// the flat-package payload), the scanner, every rule, and the installer. Anything but a clean
/// return (a crash, a hang, a leak) is a finding, and so is an install that breaks the oracle
/// in `InstallOracle`.
enum FuzzHarness {
    /// A folder of this process's own: the input file and a Documents folder, nothing else.
    static let workFolder: String = {
        let base = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
        let folder = "\(base)/pkgfuzz-\(getpid())"
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }()

    /// The input is written here: the readers take paths, as the tool does.
    static var inputPath: String { workFolder + "/input.pkg" }
    /// Each input is installed into a fresh folder here.
    static var documents: String { workFolder + "/Documents" }

    /// A small size limit keeps bombs cheap and exercises the limit paths.
    static let context = RuleContext(purpose: .validate, limits: PackageLimits(maxSize: 8 << 20))

    /// libarchive's readers, registered once, as `pkgtool` does.
    static let archiveSupport: Void = LibArchiveSupport.register()

    static func run(_ bytes: UnsafeRawBufferPointer) {
        _ = archiveSupport
        guard FileManager.default.createFile(atPath: inputPath, contents: Data(bytes)) else { return }
        _ = try? PackageCheck.run(inputPath, context: context)
        _ = try? InspectReport.make(inputPath, limits: context.limits, withFiles: false)
        install()
    }

    /// Installs the input into an empty Documents folder and holds the result to the oracle.
    static func install() {
        try? FileManager.default.removeItem(atPath: documents)
        let report = try? Installer(documents: documents).install(inputPath, options: InstallOptions(limits: context.limits))
        if let violation = InstallOracle.violation(workFolder: workFolder, documents: documents, report: report) {
            FuzzTarget.fail("install oracle: \(violation)")
        }
        try? FileManager.default.removeItem(atPath: documents)
    }
}
