import Foundation
import Testing
import TestSupport

/// `make build`, `make test`, `make demo` and `make deps` as a developer sees them (issue 21,
/// items 17 and 18): quiet, saying what they do, and leaving the machine as they found it. The
/// scripts run here against stand-ins for `swift`, `apt-get` and the service tools, so what
/// they print and call is checked without building or installing anything.
@Suite(.offThePool) struct BuildScriptTests {
    static let root = CommandRunner.packageRoot.path

    /// Writes an executable shell script `name` with `body` into `folder` of `scratch`.
    @discardableResult
    /// The script is put in place by `install`, a child process: had this process written it, a
    /// process that another test forks at that moment could still hold it open for writing when
    /// it is run, which fails with "Text file busy".
    private static func stub(_ scratch: Scratch, _ name: String, in folder: String = "bin", _ body: String) throws -> String {
        let text = try scratch.write("\(folder)/.\(name).text", "#!/bin/sh\n" + body + "\n")
        let path = scratch.path("\(folder)/\(name)")
        let placed = try CommandRunner.run("/usr/bin/install", ["-m", "755", text, path])
        guard placed.status == 0 else { throw CommandRunner.ShellError(command: "install \(path)", stderr: placed.stderr) }
        return path
    }

    /// Runs `script` with `arguments` and extra `environment`, from the repository root.
    private static func run(_ script: String, _ arguments: [String], environment: [String: String] = [:]) throws -> CommandResult {
        try CommandRunner.run("/bin/bash", [root + "/scripts/" + script] + arguments, in: CommandRunner.packageRoot, environment: environment)
    }

    /// A build says what it builds, says how long a first build takes only when there is no
    /// build yet, and shows neither SwiftPM's fetch lines nor the static linker's mktemp warning;
    /// the compiler's own messages and a failure still show.
    @Test func aBuildIsQuietAndSaysWhatItDoes() throws {
        let s = try Scratch()
        let swift = try Self.stub(s, "swift", """
            if [ "$1" = package ]; then
                echo "Fetching https://github.com/apple/swift-crypto from cache"
                echo "Computed https://github.com/apple/swift-crypto at 3.12.3 (0.70s)"
                exit 0
            fi
            echo "/usr/bin/ld.gold: warning: the use of \\`mktemp' is dangerous, better use \\`mkstemp'" >&2
            echo "Sources/pkgtool/X.swift:1:1: warning: a compiler warning" >&2
            exit "${FAKE_STATUS:-0}"
            """)
        let logs = ["BUILD_LOGS": s.path("logs")]
        let first = try Self.run("swift-build.sh", ["pkgtool (release)", s.path("no-build-yet"), "10", "--", swift, "build", "-q"], environment: logs)
        #expect(first.status == 0, "\(first.stderr)")
        let firstLines = (first.stdout + first.stderr).split(separator: "\n").map(String.init)
        #expect(firstLines.first == "==> Building pkgtool (release). A first build also compiles its dependencies (SwiftNIO, BoringSSL, swift-crypto...):", "\(firstLines)")
        #expect(firstLines.contains { $0.contains("about 10 minutes") })
        #expect(!firstLines.contains { $0.contains("Fetching") || $0.contains("Computed") || $0.contains("mktemp") }, "\(firstLines)")
        #expect(firstLines.contains { $0.contains("a compiler warning") })
        #expect(s.text("logs/resolve.log")?.contains("Fetching") == true)

        let built = try s.write("built", "a binary")
        let again = try Self.run("swift-build.sh", ["pkgtool (release)", built, "10", "--", swift, "build", "-q"], environment: logs)
        #expect(again.stdout.split(separator: "\n").first == "==> Building pkgtool (release)")
        #expect(!again.stdout.contains("first build"), "\(again.stdout)")

        let failed = try Self.run("swift-build.sh", ["pkgtool (release)", built, "10", "--", swift, "build", "-q"],
                                  environment: logs.merging(["FAKE_STATUS": "1"]) { $1 })
        #expect(failed.status == 1)
        #expect((failed.stdout + failed.stderr).contains("a compiler warning"))
    }

    /// A pass of the suite prints what it runs and one summary line, not a line per test; a
    /// failing pass shows the failing tests and where the whole log is.
    @Test func aTestPassIsSummarised() throws {
        let s = try Scratch()
        let swift = try Self.stub(s, "swift", """
            for i in $(seq 1 300); do echo "◇ Test t$i() started."; echo "✔ Test t$i() passed after 0.001 seconds."; done
            if [ -n "$FAKE_FAIL" ]; then
                echo "✘ Test broken() recorded an issue at X.swift:3:5: Expectation failed: 1 == 2"
                echo "✘ Test run with 301 tests in 3 suites failed after 1.0 seconds with 1 issue."
                exit 1
            fi
            echo "✔ Test run with 300 tests in 3 suites passed after 1.0 seconds."
            """)
        let logs = ["BUILD_LOGS": s.path("logs")]
        let passed = try Self.run("run-tests.sh", ["1-main", "Running the suite", "--", swift, "test"], environment: logs)
        #expect(passed.status == 0)
        let lines = passed.stdout.split(separator: "\n")
        #expect(lines.count == 2, "\(passed.stdout)")
        #expect(lines.first == "==> Running the suite")
        #expect(lines.last?.contains("Test run with 300 tests in 3 suites passed") == true, "\(passed.stdout)")
        #expect(s.text("logs/test-1-main.log")?.contains("✔ Test t300() passed") == true)

        let failed = try Self.run("run-tests.sh", ["1-main", "Running the suite", "--", swift, "test"],
                                  environment: logs.merging(["FAKE_FAIL": "1"]) { $1 })
        #expect(failed.status == 1)
        #expect(failed.stderr.contains("✘ Test broken() recorded an issue"), "\(failed.stderr)")
        #expect(failed.stderr.contains(s.path("logs/test-1-main.log")))
        #expect(!failed.stderr.contains("✔ Test t1()"), "the passing tests are listed too")
    }

    /// A test that takes long is named while it runs: once at most five are left running, every
    /// progress line lists those that started and have not finished for longer than the period
    /// (here 1 s instead of 30); before that it counts them. The stand-in holds its tests open
    /// until each kind of line has been printed.
    @Test func aLongTestIsNamedWhileItRuns() throws {
        let s = try Scratch()
        let progress = s.path("progress.txt")
        let swift = try Self.stub(s, "swift", """
            echo "◇ Test run started."
            echo "◇ Test quick() started."; echo "✔ Test quick() passed after 0.001 seconds."
            echo '◇ Test "a display name" started.'
            echo "◇ Test slow(name:) started."; echo '◇ Test case passing 1 argument name → "x" to slow(name:) started.'
            echo "◇ Test same() started."; echo "◇ Test same() started."; echo "✔ Test same() passed after 0.001 seconds."
            for i in 1 2 3 4 5; do echo "◇ Test extra$i() started."; done
            # Each wait gives up after a minute, so a runner that never says it fails the test, not hangs it.
            for i in $(seq 600); do grep -q "8 still running" '\(progress)' && break; sleep 0.1; done
            for i in 1 2 3 4 5; do echo "✔ Test extra$i() passed after 2 seconds."; done
            for i in $(seq 600); do grep -q "running for over" '\(progress)' && break; sleep 0.1; done
            echo "✔ Test slow(name:) with 1 test case passed after 2 seconds."; echo "✔ Test same() passed after 2 seconds."
            echo '✘ Test "a display name" failed after 2 seconds with 1 issue.'
            echo "✘ Test run with 9 tests in 2 suites failed after 2.0 seconds with 1 issue."
            exit 1
            """)
        let run = try CommandRunner.run("/bin/bash", ["-c", "bash scripts/run-tests.sh 1-main 'Running the suite' -- '\(swift)' test > '\(progress)'"],
                                        in: CommandRunner.packageRoot, environment: ["BUILD_LOGS": s.path("logs"), "PROGRESS_SECONDS": "1"])
        #expect(run.status == 1)
        let lines = (s.text("progress.txt") ?? "").split(separator: "\n")
        // Eight running (the display name, slow(name:) once and not by its case, one of the two
        // suites' same(), five extras) are counted, not named: they wait for one another.
        #expect(lines.contains { $0.contains("8 still running") && !$0.contains("extra") }, "\(lines)")
        let named = lines.filter { $0.contains("running for over 1 s:") }
        #expect(!named.isEmpty, "\(lines)")
        for line in named {
            // Once the extras are done, the three left are named.
            #expect(line.components(separatedBy: " s)").count - 1 == 3, "\(line)")
            #expect(line.contains("slow(name:)") && line.contains("a display name") && line.contains("same()"), "\(line)")
            #expect(!line.contains("quick()") && !line.contains("case passing") && !line.contains("extra"), "\(line)")
        }
    }

    /// `make test` and `make build` run through these scripts, quietly; `make test` is one `swift test`.
    @Test(arguments: ["test", "build", "demo"])
    func makeTargetsBuildThroughTheQuietScripts(target: String) throws {
        let plan = try CommandRunner.run("/usr/bin/make", ["-n", "--no-print-directory", "-C", Self.root, target])
        #expect(plan.status == 0, "\(plan.stderr)")
        for line in plan.stdout.split(separator: "\n") where line.contains("swift build") || line.contains("swift test") {
            #expect(line.contains(" -q") || line.contains("--skip-build"), "a noisy build: \(line)")
        }
        let commands = plan.stdout.replacingOccurrences(of: "\\\n", with: " ")
        for line in commands.split(separator: "\n") where line.contains(" build ") && line.contains("swift") && !line.contains("man.log") {
            #expect(line.contains("scripts/swift-build.sh"), "a build that does not say what it does: \(line)")
        }
        let testPasses = commands.split(separator: "\n").filter { $0.contains("swift test") }
        for line in testPasses {
            #expect(line.contains("scripts/run-tests.sh"), "a test pass printed line by line: \(line)")
        }
        // One pass: the in-memory transport ended the need for suites kept apart in passes of their own.
        #expect(testPasses.count == (target == "test" ? 1 : 0), "swift test runs \(testPasses.count) times")
    }

    /// Stand-ins for Debian's package tools: every package is installed but those in $MISSING;
    /// `apt-get` and the service tools only write down how they were called.
    private func debianStandIns(_ s: Scratch) throws -> [String: String] {
        try Self.stub(s, "dpkg-query", """
            for name in $MISSING; do [ "$name" = "$3" ] && exit 1; done
            echo "install ok installed"
            """)
        try Self.stub(s, "id", "echo 0")
        for tool in ["apt-get", "deb-systemd-helper", "systemctl", "update-rc.d"] {
            try Self.stub(s, tool, "echo \"\(tool) $*\" >> \"\(s.path("calls"))\"")
        }
        return ["PATH": s.path("bin") + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"),
                "POLICY_RC_D": s.path("policy-rc.d"), "DEPS_LOGS": s.path("logs")]
    }

    /// nginx is for the tests only: `make demo`'s dependencies leave it out, `make test`'s install
    /// it with its service disabled, and an nginx already there is left as it is (issue 21, item
    /// 18: `make deps` left Debian's nginx service enabled, serving port 80 after the next boot).
    @Test func nginxOnlyForTestsWithItsServiceDisabled() throws {
        let s = try Scratch()
        var environment = try debianStandIns(s)
        environment["MISSING"] = "nginx zip libarchive-dev"
        let build = try Self.run("deps.sh", ["build"], environment: environment)
        #expect(build.status == 0, "\(build.stderr)")
        #expect(s.text("calls")?.contains("apt-get install -y --no-install-recommends libarchive-dev\n") == true, "\(s.text("calls") ?? "")")
        #expect(s.text("calls")?.contains("nginx") == false)
        #expect(build.stdout.split(separator: "\n").count == 1, "apt's output shows: \(build.stdout)")

        try FileManager.default.removeItem(atPath: s.path("calls"))
        let test = try Self.run("deps.sh", ["test"], environment: environment)
        #expect(test.status == 0, "\(test.stderr)")
        let calls = s.text("calls") ?? ""
        #expect(calls.contains("apt-get install -y --no-install-recommends libarchive-dev zip nginx"), "\(calls)")
        #expect(calls.contains("deb-systemd-helper disable nginx.service"), "\(calls)")
        #expect(calls.contains("systemctl disable --quiet nginx.service"), "\(calls)")
        #expect(!exists(s.path("policy-rc.d")), "the policy that kept services from starting was left behind")

        try FileManager.default.removeItem(atPath: s.path("calls"))
        environment["MISSING"] = "zip"
        #expect(try Self.run("deps.sh", ["test"], environment: environment).status == 0)
        #expect(s.text("calls")?.contains("disable") == false, "an nginx that was already there was disabled")

        let demo = try CommandRunner.run("/usr/bin/make", ["-n", "--no-print-directory", "-C", Self.root, "demo"]).stdout
        let tests = try CommandRunner.run("/usr/bin/make", ["-n", "--no-print-directory", "-C", Self.root, "test"]).stdout
        #expect(demo.contains("scripts/deps.sh build") && !demo.contains("scripts/deps.sh test"), "\(demo)")
        #expect(tests.contains("scripts/deps.sh test"), "\(tests)")
    }
}
