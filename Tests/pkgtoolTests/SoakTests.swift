import Foundation
import Testing
import TestSupport

/// The chaos soak of `make soak` in small: 40 runs of the built `pkgtool sync` against a
/// loopback server that picks a fault per request from a seed, with SIGTERM and SIGKILL at
/// random moments, every run checked against SPEC section 7's invariants (see `Soak`); and the
/// soak's own self-test.
///
/// The seed is fixed, so that `make test` is the same every time; `PKGTOOL_SOAK_SEED=N` runs
/// another, and `make soak` explores with a fresh seed and 300 runs.
@Suite(.offThePool, .timeLimit(.minutes(2))) struct SoakTests {
    /// A seed whose 40 runs meet twelve kinds of fault, among them a body too long without a
    /// length, a range with a byte inverted and a server that alters a file without a checksum,
    /// over five installs that are deltas.
    static let seed: UInt64 = 10

    @Test func fortySyncsUnderChaosKeepEveryInvariant() async throws {
        let seed = ProcessInfo.processInfo.environment["PKGTOOL_SOAK_SEED"].flatMap { UInt64($0) } ?? Self.seed
        // A second of slack on time bounds, not half of one: other suites share the two cores.
        // The soak stops itself after 100 s (and then falls short of 40 runs), inside the
        // test's 2-minute guard, so a slow soak fails with its report rather than the guard's.
        let options = SoakOptions(seed: seed, runs: 40, timeLimit: 100, slack: 1,
                                  progress: { line in if !line.hasPrefix("soak: ") || line.contains("seed") { print(line) } },
                                  progressEvery: .max)
        // The soak blocks its thread on child processes: not one of Swift concurrency's few.
        let report = try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(with: Result { try Soak.run(options) }) }
        }
        #expect(report.runs == 40, "\(report.summary)")
        #expect(report.violations.isEmpty, "\(report.summary)")
    }

    /// The soak catches what a sync that skips a check installs: here every published package
    /// has a byte of a file without a checksum inverted and its catalog entry rewritten to match
    /// (the unsigned catalog cannot reveal it, as a skipped check would not), and every run that
    /// installs one must be reported, naming the file. A soak whose checks lost their teeth
    /// fails here, not silently.
    @Test func aSyncThatInstallsAlteredBytesIsReported() async throws {
        var altering = SoakOptions(seed: Self.seed, runs: 8, timeLimit: 100, slack: 1, progress: { _ in }, progressEvery: .max)
        altering.publisherAlters = true
        let options = altering
        let report = try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(with: Result { try Soak.run(options) }) }
        }
        #expect(report.installs > 0, "\(report.summary)")
        // Each install is one violation; the Documents folder is emptied after each, so that the
        // next run does not report the same damage.
        let altered = report.violations.filter { violation in
            violation.problems.contains { $0.contains("is not the reference extract") && $0.contains("changing.bin") }
        }
        #expect(altered.count == report.installs, "\(report.summary)")
    }
}
