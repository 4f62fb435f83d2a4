import Foundation

/// What one run of pkgfuzz fuzzes, chosen with `--target=NAME` (libFuzzer ignores flags that
/// start with `--`, and hands them on to the processes it starts itself):
/// `package` (the default: readers, rules, installer), `catalog`, `chunks` (the TOC parser and
/// chunk tables) and `delta` (a sync against a hostile in-memory server).
enum FuzzTarget: String, CaseIterable {
    /// Readers, rules and installer (`FuzzHarness`); `catalog.json`'s parser (`CatalogTarget`);
    /// the TOC parser and chunk tables (`ChunkTableTarget`); a sync (`DeltaTarget`).
    case package, catalog, chunks, delta

    /// The target `arguments` name; nil (with a message) for an unknown one.
    static func chosen(by arguments: [String]) -> FuzzTarget? {
        guard let flag = arguments.last(where: { $0.hasPrefix("--target=") }) else { return .package }
        let name = String(flag.dropFirst("--target=".count))
        guard let target = FuzzTarget(rawValue: name) else {
            FileHandle.standardError.write(Data("pkgfuzz: unknown target \(name); the targets: \(allCases.map(\.rawValue).joined(separator: ", "))\n".utf8))
            return nil
        }
        return target
    }

    /// A folder of this process's own for the delivery targets' fixtures and inputs.
    static let workFolder: String = {
        let base = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
        return "\(base)/pkgfuzz-\(getpid())-delivery"
    }()

    /// Runs inputs of one target; made once, before the first input.
    final class Runner {
        /// Runs one input; what it did, in words, when the target says.
        let run: ([UInt8]) -> String?
        /// The target's own seeds, by file name.
        let seeds: () -> [String: [UInt8]]

        /// The runner of `target`, its fixture made.
        init(_ target: FuzzTarget) throws {
            switch target {
            case .package:
                run = { bytes in
                    bytes.withUnsafeBytes { FuzzHarness.run($0) }
                    return nil
                }
                seeds = { [:] }
            case .catalog:
                run = { CatalogTarget.run($0); return nil }
                seeds = CatalogTarget.seeds
            case .chunks:
                let target = try ChunkTableTarget(work: FuzzTarget.workFolder)
                run = { target.run($0); return nil }
                seeds = target.seeds
            case .delta:
                let target = try DeltaTarget(work: FuzzTarget.workFolder)
                run = target.run
                seeds = target.seeds
            }
        }
    }

    /// Removes the folders this process worked in.
    static func cleanUp() {
        try? FileManager.default.removeItem(atPath: FuzzHarness.workFolder)
        try? FileManager.default.removeItem(atPath: workFolder)
    }

    /// Reports an oracle's finding and aborts, which libFuzzer takes for a crash (it saves the
    /// input); the work folders go first, which `atexit` would not see to.
    static func fail(_ finding: String) -> Never {
        FileHandle.standardError.write(Data((finding + "\n").utf8))
        cleanUp()
        abort()
    }
}

/// The runner of the chosen target, made from `main` before libFuzzer starts.
nonisolated(unsafe) var runner: FuzzTarget.Runner?

/// `--seeds=DIR`: writes the target's own seeds into DIR and returns true.
func writeSeeds(_ arguments: [String], runner: FuzzTarget.Runner) throws -> Bool {
    guard let flag = arguments.first(where: { $0.hasPrefix("--seeds=") }) else { return false }
    let folder = String(flag.dropFirst("--seeds=".count))
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    for (name, bytes) in runner.seeds() {
        try Data(bytes).write(to: URL(fileURLWithPath: folder + "/" + name))
    }
    return true
}

/// Makes the runner of the target `arguments` name, or ends the process with a message.
func prepare(_ arguments: [String]) -> FuzzTarget.Runner {
    guard let target = FuzzTarget.chosen(by: arguments) else { exit(64) }
    do {
        let made = try FuzzTarget.Runner(target)
        atexit { FuzzTarget.cleanUp() }
        if try writeSeeds(arguments, runner: made) { exit(0) }
        return made
    } catch {
        FileHandle.standardError.write(Data("pkgfuzz: the \(target) target cannot be set up: \(error)\n".utf8))
        exit(2)
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
    _ = runner?.run(Array(UnsafeRawBufferPointer(start: data, count: size)))
    return 0
}

/// SwiftPM links an executable's `main` to `<module>_main`, so libFuzzer's own `main` is never
/// used; this one picks the target and hands control to libFuzzer's driver (`make fuzz` builds
/// with `-sanitize=fuzzer -D FUZZING`).
@_cdecl("pkgfuzz_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    let arguments = (0..<Int(argc)).compactMap { argv?[$0].map { String(cString: $0) } }
    runner = prepare(arguments)
    var count = argc
    var pointers = argv
    return LLVMFuzzerRunDriver(&count, &pointers, fuzzOneInput)
}
#else
/// Without libFuzzer, replays saved inputs (crashers, seeds) through the chosen target:
/// `pkgfuzz [--target=NAME] FILE...`, one `ok FILE` line each; an oracle's finding aborts.
@main
struct FuzzReplay {
    /// Replays each file named on the command line.
    static func main() throws {
        let arguments = CommandLine.arguments
        let runner = prepare(arguments)
        for path in arguments.dropFirst() where !path.hasPrefix("--") {
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            let said = runner.run(Array(data))
            print("ok \(path)" + (said.map { ": " + $0 } ?? ""))
        }
        FuzzTarget.cleanUp()
    }
}
#endif
