import Foundation
import PkgKit
import PkgKitArchive

/// Feeds one input to everything `validate` runs on an untrusted file: the format detection,
/// the readers (libarchive for xar/zip/tar/cpio, the flat-package reader), the scanner and
/// every rule. Anything but a clean return (a crash, a hang, a leak) is a finding.
enum FuzzHarness {
    /// Scratch file the input is written to: the readers take paths, as the tool does.
    static let scratchPath: String = {
        let folder = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
        return "\(folder)/pkgfuzz-\(getpid()).pkg"
    }()

    /// A small size limit keeps bombs cheap and exercises the limit paths.
    static let context = RuleContext(purpose: .validate, limits: PackageLimits(maxSize: 8 << 20))

    /// libarchive's readers, registered once, as `pkgtool` does.
    static let archiveSupport: Void = LibArchiveSupport.register()

    static func run(_ bytes: UnsafeRawBufferPointer) {
        _ = archiveSupport
        guard FileManager.default.createFile(atPath: scratchPath, contents: Data(bytes)) else { return }
        _ = try? PackageCheck.run(scratchPath, context: context)
        _ = try? InspectReport.make(scratchPath, limits: context.limits, withFiles: false)
    }
}

#if FUZZING
/// libFuzzer's driver, called from our own entry point.
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(_ argc: UnsafeMutablePointer<CInt>,
                         _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                         _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> CInt

/// The function libFuzzer calls with each input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzHarness.run(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}

/// SwiftPM links an executable's `main` to `<module>_main`, so libFuzzer's own `main` is never
/// used; this one hands control to libFuzzer's driver instead (`make fuzz` builds with
/// `-sanitize=fuzzer -D FUZZING`).
@_cdecl("pkgfuzz_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var count = argc
    var arguments = argv
    return LLVMFuzzerRunDriver(&count, &arguments, fuzzOneInput)
}
#else
/// Without libFuzzer, replays saved inputs (crashers, seeds) through the same harness.
@main
struct FuzzReplay {
    static func main() throws {
        for path in CommandLine.arguments.dropFirst() {
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            data.withUnsafeBytes { FuzzHarness.run($0) }
            print("ok \(path)")
        }
    }
}
#endif
