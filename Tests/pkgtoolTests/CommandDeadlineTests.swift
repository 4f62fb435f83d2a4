import Foundation
import Testing
import TestSupport

/// A command an end-to-end test runs gets a deadline: one that hangs is killed with everything it
/// started, and the test fails at once, naming it, instead of hanging `make test`.
@Suite struct CommandDeadlineTests {
    @Test func aHungCommandIsKilledAtItsDeadlineAndNamed() throws {
        let started = ContinuousClock.now
        let error = #expect(throws: CommandRunner.TimedOut.self) {
            try CommandRunner.run("/bin/sleep", ["1000"], deadline: .seconds(1))
        }
        #expect(ContinuousClock.now - started < .seconds(30))
        #expect(error?.command == "/bin/sleep 1000")
        #expect(error?.description.contains("`/bin/sleep 1000` still ran after") == true)
    }

    @Test func whatTheCommandStartedIsKilledWithIt() throws {
        // The shell starts a second sleep in the background and names it on stderr before waiting.
        let error = #expect(throws: CommandRunner.TimedOut.self) {
            try CommandRunner.run("/bin/sh", ["-c", "sleep 1000 & echo $! >&2; wait"], deadline: .seconds(1))
        }
        let grandchild = try #require(error.flatMap { pid_t($0.stderr.trimmingCharacters(in: .whitespacesAndNewlines)) })
        // Killed: gone, or a zombie its new parent has not reaped yet.
        let state = (try? String(contentsOfFile: "/proc/\(grandchild)/stat", encoding: .utf8))?
            .split(separator: ")").last?.split(separator: " ").first
        #expect(state == nil || state == "Z" || state == "X")
    }

    @Test func aCommandWithinItsDeadlineReportsItsStatusAndOutput() throws {
        let result = try CommandRunner.run("/bin/sh", ["-c", "echo out; echo err >&2; exit 3"], deadline: .seconds(60))
        #expect(result.status == 3)
        #expect(result.stdout == "out\n")
        #expect(result.stderr == "err\n")
    }
}
