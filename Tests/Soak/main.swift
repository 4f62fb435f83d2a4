// pkgsoak: the chaos soak of `pkgtool sync` (`make soak`). The work is `Soak` in TestSupport,
// which SoakTests runs too, with fewer syncs.
import Foundation
import TestSupport

let usage = """
usage: pkgsoak [--seed N] [--runs N] [--time-limit SECONDS] [--pkgtool PATH]
  --seed N            replay the soak of seed N (default: a fresh seed, printed first)
  --runs N            syncs to run (default 300)
  --time-limit S      start no run after S seconds (default 540: the soak ends within 10 minutes)
  --pkgtool PATH      the binary under test (default: \(CommandRunner.pkgtool))
Exit 0 when every run kept every invariant, 1 on any violation or when the time limit came first.
"""

// Each line written at once (no stdio buffer), also when make's output is a pipe.
@Sendable func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

var options = SoakOptions(seed: SoakOptions.freshSeed(), progress: say)
var arguments = CommandLine.arguments.dropFirst()
while let flag = arguments.popFirst() {
    guard flag != "--help" && flag != "-h" else {
        say(usage)
        exit(0)
    }
    guard let value = arguments.popFirst() else {
        FileHandle.standardError.write(Data("pkgsoak: \(flag) needs a value\n\(usage)\n".utf8))
        exit(64)
    }
    switch flag {
    case "--seed" where UInt64(value) != nil: options.seed = UInt64(value)!
    case "--runs" where (Int(value) ?? 0) > 0: options.runs = Int(value)!
    case "--time-limit" where (Double(value) ?? 0) > 0: options.timeLimit = Double(value)!
    case "--pkgtool": options.pkgtool = value
    default:
        FileHandle.standardError.write(Data("pkgsoak: bad option \(flag) \(value)\n\(usage)\n".utf8))
        exit(64)
    }
}
// Ctrl-C or SIGTERM: the run in progress is killed, the scratch folder removed, the report
// printed. A handler, not SIG_IGN with a dispatch source: an ignored signal stays ignored in the
// children, and the pkgtool runs must meet SIGTERM as a user's would.
nonisolated(unsafe) var stopSignal: sig_atomic_t = 0
for number in [SIGINT, SIGTERM] { signal(number) { _ in stopSignal = 1 } }
options.stopRequested = { stopSignal != 0 }
do {
    let report = try Soak.run(options)
    say(report.summary)
    exit(report.passed ? 0 : 1)
} catch {
    FileHandle.standardError.write(Data("pkgsoak: the soak could not be set up: \(error)\n".utf8))
    exit(2)
}

