import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a chaos soak does: how many syncs, from which seed, within how long.
public struct SoakOptions: Sendable {
    /// Every random choice (faults, signals and their moments, versions, wipes) follows from it.
    public var seed: UInt64
    /// How many `pkgtool sync` runs.
    public var runs: Int
    /// No run starts after this many seconds: the soak stops by itself, reporting that it did.
    public var timeLimit: TimeInterval
    /// The binary under test.
    public var pkgtool: String
    /// `sync --timeout`, passed when the binary has the flag.
    public var idleTimeout: Int
    /// Seconds SIGTERM may take to end a sync (SPEC section 7: 2).
    public var signalGrace: TimeInterval
    /// Added to every time bound: how late the soak may notice an end on a busy machine.
    public var slack: TimeInterval
    /// Hears the seed first, then a line every `progressEvery` runs and each violation at once.
    public var progress: @Sendable (String) -> Void
    /// Runs between progress lines.
    public var progressEvery: Int
    /// Asked between runs and while one runs: true stops the soak (the run in progress is
    /// killed and not checked), as when `pkgsoak` is interrupted.
    public var stopRequested: @Sendable () -> Bool = { false }
    /// For the soak's self-test only: each published package has a byte of a file without a
    /// checksum inverted, its catalog entry rewritten to match, so that a sync without `--trust`
    /// installs what is not the reference, as a sync that skips a check would from a server that
    /// alters bodies. Every install must then be reported as a violation.
    public var publisherAlters = false

    /// A soak of `runs` syncs from `seed`, with the limits of `make soak`.
    public init(seed: UInt64, runs: Int = 300, timeLimit: TimeInterval = 540, pkgtool: String = CommandRunner.pkgtool,
                idleTimeout: Int = 2, signalGrace: TimeInterval = 2, slack: TimeInterval = 0.5,
                progress: @escaping @Sendable (String) -> Void = { print($0) }, progressEvery: Int = 25) {
        self.seed = seed
        self.runs = runs
        self.timeLimit = timeLimit
        self.pkgtool = pkgtool
        self.idleTimeout = idleTimeout
        self.signalGrace = signalGrace
        self.slack = slack
        self.progress = progress
        self.progressEvery = progressEvery
    }

    /// A seed from the clock, for a soak that explores.
    public static func freshSeed() -> UInt64 {
        var random = SeededRandom(seed: UInt64(Date().timeIntervalSince1970 * 1e6) ^ UInt64(getpid()))
        return random.next() >> 11  // 53 bits: short enough to type
    }
}

/// The chaos soak: `pkgtool sync` (the built binary, as a child process) run again and again
/// against a loopback server that picks a fault per request at random, of a product whose
/// versions are published as the soak goes, some runs ended by SIGTERM or SIGKILL at random
/// moments. After every run the invariants of SPEC section 7 are checked (`SoakCheck`): the
/// record names a complete version, byte-identical to a reference extract, the new one or the
/// previous one; nothing outside `Documents/<id>/`; no `.part` larger than its package; the run
/// ended within its bound; its exit status is one the SPEC allows for what it met.
///
/// Everything lives in a `Scratch` folder removed at the end; every wait has a deadline, and a
/// run that outlives its bound is killed and counted, so the soak itself never hangs.
public enum Soak {
    /// Runs the soak; throws only when it cannot be set up (a package cannot be made, the
    /// server cannot start).
    public static func run(_ options: SoakOptions) throws -> SoakReport {
        options.progress("soak: seed \(options.seed) (replay: make soak SEED=\(options.seed), pkgsoak --seed \(options.seed),"
                         + " PKGTOOL_SOAK_SEED=\(options.seed) for SoakTests), \(options.runs) syncs of \(options.pkgtool)")
        let started = Date()
        let scratch = try Scratch()
        var report = SoakReport(seed: options.seed, plannedRuns: options.runs)
        let root = SeededRandom(seed: options.seed)
        let product = try SoakProduct(pkgtool: options.pkgtool, work: scratch.path("work"), random: root.stream(1), alters: options.publisherAlters)
        let server = try FaultHTTPServer(root: product.published)
        defer { server.stop() }
        // An ignored signal stays ignored across exec: a soak started with SIGTERM ignored (as
        // some CI runners and `nohup` do) would hand that on to every sync.
        let previous = signal(SIGTERM, SIG_DFL)
        if unsafeBitCast(previous, to: Int.self) != unsafeBitCast(SIG_IGN, to: Int.self) { _ = signal(SIGTERM, previous) }
        let timeoutFlag = try supportsTimeout(options.pkgtool) ? options.idleTimeout : nil
        report.timeoutFlag = timeoutFlag
        // Without the flag, sync's own idle timeout (30 s) would make each stall cost half a
        // minute: the server then ends a stall itself after 3 s, which the client sees as a drop.
        server.longestStall = timeoutFlag == nil ? 3 : 120
        let idle = TimeInterval(timeoutFlag ?? 3)
        let setting = SoakSetting(documents: scratch.path("Documents"), workingDirectory: try scratch.mkdir("cwd"),
                                  temporary: try scratch.mkdir("tmp"), logs: try scratch.mkdir("logs"),
                                  catalogURL: server.url("catalog.json").absoluteString, timeoutFlag: timeoutFlag,
                                  // Legitimately: one slow fault, retries' backoff (3.5 s a request),
                                  // the work itself on a busy machine. A hang is far beyond.
                                  bound: 12 + 4 * idle + options.slack)
        var schedule = root.stream(2)
        // A version every 1 to 6 runs: each brings installs, deltas and resumes (an unchanged
        // product makes one request). Fixed, so that a soak of fewer runs replays the first
        // runs of a longer one with the same seed.
        let gap = 1...6
        var nextPublish = 0
        for run in 0..<options.runs {
            if options.stopRequested() {
                report.stoppedEarly = true
                options.progress("soak: stopped after \(run) runs")
                break
            }
            if Date().timeIntervalSince(started) > options.timeLimit {
                report.stoppedEarly = true
                options.progress("soak: time limit of \(Int(options.timeLimit)) s reached after \(run) runs")
                break
            }
            if run == nextPublish {
                try product.publishNext()
                report.versions.append(product.latest!.version)
                if !product.latest!.withoutChecksums.isEmpty { report.versionsWithoutChecksums.append(product.latest!.version) }
                nextPublish = run + Int.random(in: gap, using: &schedule)
            }
            var random = root.stream(1000 + UInt64(run))
            // The last run meets no fault and no signal: after everything, sync must still
            // bring the product to the latest version.
            let last = run == options.runs - 1
            if run > 0, !last, random.chance(0.05) {
                try? FileManager.default.removeItem(atPath: setting.documents)
                report.wipes += 1
            }
            let runPlan = SoakRun(number: run, random: &random, last: last, product: product, setting: setting)
            let observation = runPlan.execute(server: server, options: options)
            if observation.abandoned { continue }
            tally(observation, into: &report)
            let problems = SoakCheck(setting: setting, product: product, options: options).problems(observation)
            if !problems.isEmpty {
                let violation = SoakViolation(run: run, seed: options.seed, problems: problems, context: observation.context)
                report.violations.append(violation)
                options.progress(violation.description)
                // A new device: later runs start clean instead of reporting the same damage again.
                try? FileManager.default.removeItem(atPath: setting.documents)
            }
            report.runs = run + 1
            if report.runs % options.progressEvery == 0 {
                options.progress("soak: \(report.runs)/\(options.runs) runs, \(report.installs) installs, "
                                 + "\(report.violations.count) violations, \(Int(Date().timeIntervalSince(started))) s")
            }
        }
        // Every version folder left is still byte-identical to its reference: hard-linked
        // files that a later run wrote into would show here.
        let folder = setting.documents + "/" + SoakProduct.identifier
        for name in names(folder) {
            guard let version = product.version(name) else { continue }
            let mismatches = differences(folder + "/" + name, expected: version.reference)
            if !mismatches.isEmpty {
                report.violations.append(SoakViolation(run: report.runs, seed: options.seed,
                                                       problems: ["at the end, version folder \(name) differs from its reference: "
                                                                  + mismatches.joined(separator: ", ")], context: []))
            }
        }
        report.leftInProductFolder = names(folder).filter { product.version($0) == nil }
        report.versionFoldersLeft = names(folder).count - report.leftInProductFolder.count
        report.wallTime = Date().timeIntervalSince(started)
        return report
    }

    /// True when `pkgtool sync --help` lists `--timeout`.
    static func supportsTimeout(_ pkgtool: String) throws -> Bool {
        try CommandRunner.run(pkgtool, ["sync", "--help"]).stdout.contains("--timeout")
    }

    private static func tally(_ observation: SoakObservation, into report: inout SoakReport) {
        report.cleanRequests += observation.behaved
        for fault in observation.faults { report.faults[fault.kind, default: 0] += 1 }
        if let signal = observation.signal {
            report.signals[signal.name, default: 0] += 1
        } else if observation.plannedSignal != nil {
            report.signalsNotNeeded += 1
        }
        if observation.forced != nil { report.hung += 1 }
        let record = readRecord(observation.productFolder)?.version
        if record != nil && record != observation.previous {
            report.installs += 1
            let json = (try? JSONSerialization.jsonObject(with: Data(observation.stdout.utf8))) as? [String: Any]
            if let products = json?["products"] as? [[String: Any]], let delta = products.first(where: { $0["delta"] as? Bool == true }) {
                report.deltaInstalls += 1
                report.deltaBytes += (delta["bytesDownloaded"] as? Int) ?? 0
                report.deltaPackageBytes += observation.latest.size
            }
        }
        switch observation.status {
        case 0 where record == observation.previous: report.unchanged += 1
        case 1: report.refusals += 1
        case 2: report.failures += 1
        case 143, -SIGTERM: report.interrupted += 1
        case -SIGKILL where observation.forced == nil: report.killed += 1
        default: break
        }
    }
}

/// Where the runs happen, the same for all of them.
struct SoakSetting {
    /// The Documents folder synced into.
    var documents: String
    /// The folder each sync runs in: it must stay empty.
    var workingDirectory: String
    /// The sync's TMPDIR: it must stay empty too.
    var temporary: String
    /// Where a run's stdout and stderr go.
    var logs: String
    /// The fault server's catalog.
    var catalogURL: String
    /// `--timeout`'s value, when the binary has the flag.
    var timeoutFlag: Int?
    /// Seconds a run may take.
    var bound: TimeInterval
}

/// When a planned signal is sent.
enum SoakTrigger: CustomStringConvertible {
    /// This many seconds after the start.
    case delay(TimeInterval)
    /// Once the download's `.part` holds this many bytes.
    case partBytes(Int)
    /// Once the server has sent this many body bytes in the run.
    case servedBytes(Int)

    var description: String {
        switch self {
        case .delay(let seconds): return String(format: "%.3f s after the start", seconds)
        case .partBytes(let bytes): return "once the .part holds \(bytes) bytes"
        case .servedBytes(let bytes): return "once the server has sent \(bytes) body bytes"
        }
    }
}

/// One sync: its arguments, faults and signal, all drawn before it starts.
struct SoakRun {
    var number: Int
    var arguments: [String]
    var plan: SoakFaultPlan
    var signal: (number: Int32, name: String, trigger: SoakTrigger)?
    var previous: String?
    var namesBefore: [String]
    var latest: SoakVersion
    var setting: SoakSetting

    var productFolder: String { setting.documents + "/" + SoakProduct.identifier }

    init(number: Int, random: inout SeededRandom, last: Bool, product: SoakProduct, setting: SoakSetting) {
        self.number = number
        self.setting = setting
        latest = product.latest!
        let folder = setting.documents + "/" + SoakProduct.identifier
        previous = readRecord(folder)?.version
        namesBefore = names(folder)
        var arguments = ["sync", setting.catalogURL, "--documents", setting.documents, "--json"]
        // An update run names no product; it needs one installed.
        if previous == nil || random.chance(0.8) { arguments += ["--product", SoakProduct.identifier] }
        if let timeout = setting.timeoutFlag { arguments += ["--timeout", String(timeout)] }
        if random.chance(0.15) { arguments.append("--no-delta") }
        if random.chance(0.3) { arguments += ["--keep", String(Int.random(in: 1...3, using: &random))] }
        self.arguments = arguments
        plan = SoakFaultPlan(random: random.stream(1), clean: last || random.chance(0.2), unverifiedData: product.unverifiedData)
        let kind = last ? 0 : random.weighted([(0, 0.55), (SIGTERM, 0.3), (SIGKILL, 0.15)])
        if kind != 0 {
            let expected = Self.expectedTransfer(previous: previous.flatMap(product.version), latest: latest,
                                                 whole: arguments.contains("--no-delta") || namesBefore.contains(".download-\(latest.version).part"))
            // Byte counts log-uniform from 1 kB to what the run should fetch, so that small and
            // large bodies, deltas and whole downloads are all cut somewhere; delays as short as
            // the runs (well under a second, a tenth for an unchanged product).
            func bytes() -> Int { Int(exp(Double.random(in: log(1_000)...log(Double(max(expected, 2_000))), using: &random))) }
            var triggers: [(SoakTrigger, Double)] = [(.delay(Double.random(in: 0.001...(expected == 0 ? 0.08 : 0.4), using: &random)), 0.4)]
            if expected > 0 { triggers.append((.servedBytes(bytes()), 0.3)) }
            if expected == latest.size { triggers.append((.partBytes(bytes()), 0.3)) }
            signal = (kind, kind == SIGTERM ? "SIGTERM" : "SIGKILL", random.weighted(triggers))
        }
    }

    /// About how many package bytes the run fetches when nothing goes wrong: none when the
    /// latest is installed, the package for a whole download, else the header and TOC plus
    /// the files that changed (uncompressed: an upper bound).
    static func expectedTransfer(previous: SoakVersion?, latest: SoakVersion, whole: Bool) -> Int {
        guard let previous else { return latest.size }
        if previous.version == latest.version { return 0 }
        // sync fetches a package of up to 128 KiB whole.
        if whole || latest.size <= 131_072 { return latest.size }
        var changed = 0
        for (path, entry) in latest.reference where previous.reference[path] != entry {
            if case .file(let data) = entry { changed += data.count }
        }
        return min(latest.size, 65_536 + changed)
    }

    /// Runs the sync, sends its signal when the trigger fires, and kills it when it outlives
    /// its bound (or ignores SIGTERM); then waits for the server's answers to end.
    func execute(server: FaultHTTPServer, options: SoakOptions) -> SoakObservation {
        server.choose { [plan] request in plan.pick(request) }
        defer { server.choose(nil) }
        let sentBefore = server.bytesSent
        let part = productFolder + "/.download-\(latest.version).part"
        let output = setting.logs + "/stdout", errors = setting.logs + "/stderr"
        var observation = SoakObservation(run: self, productFolder: productFolder)
        let child: SoakChild
        do {
            child = try SoakChild(options.pkgtool, arguments, directory: setting.workingDirectory,
                                  environment: ["TMPDIR": setting.temporary], output: output, errors: errors)
        } catch {
            observation.forced = "could not start pkgtool: \(error)"
            return observation
        }
        let bound = child.startedAt.addingTimeInterval(setting.bound)
        var sent: (name: String, at: Date)?
        var killedAt: Date?
        // Polls every 5 ms: the trigger is a condition on the child's progress, not a sleep.
        while !child.wait(until: Date().addingTimeInterval(0.005)) {
            let now = Date()
            if killedAt == nil, options.stopRequested() {
                observation.abandoned = true
                child.send(SIGKILL)
                killedAt = now
            }
            if let killedAt {
                guard now.timeIntervalSince(killedAt) < 10 else {
                    observation.forced = (observation.forced ?? "") + "; still alive 10 s after SIGKILL (left running)"
                    break
                }
                continue
            }
            if sent == nil, let signal, fires(signal.trigger, start: child.startedAt, part: part, served: server.bytesSent - sentBefore) {
                child.send(signal.number)
                sent = (signal.name, now)
                observation.signal = (signal.name, now.timeIntervalSince(child.startedAt))
                if signal.number == SIGKILL { killedAt = now }
            }
            if let sent, sent.name == "SIGTERM", now.timeIntervalSince(sent.at) > 10 {
                // Past sync's own last resort (it exits 5 s after the first signal), so that a
                // late end and no end at all are told apart.
                observation.forced = "still running 10 s after SIGTERM"
            } else if sent == nil, now > bound {
                observation.forced = String(format: "still running after its bound of %.1f s", setting.bound)
            }
            if observation.forced != nil {
                child.send(SIGKILL)
                killedAt = now
            }
        }
        observation.ended = child.wait(until: Date())
        observation.duration = child.duration
        observation.endedAfterSignal = sent.map { child.end.timeIntervalSince($0.at) }
        if observation.ended { observation.status = child.status }
        // The server's threads end once the child's connections are closed.
        _ = server.waitUntilIdle(timeout: 5)
        (observation.faults, observation.behaved) = plan.outcome
        observation.stdout = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        observation.stderr = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
        return observation
    }

    private func fires(_ trigger: SoakTrigger, start: Date, part: String, served: Int) -> Bool {
        switch trigger {
        case .delay(let seconds): return Date().timeIntervalSince(start) >= seconds
        case .partBytes(let bytes):
            var info = stat()
            return stat(part, &info) == 0 && Int(info.st_size) >= bytes
        case .servedBytes(let bytes): return served >= bytes
        }
    }
}

/// What one run did, for the checks and the report.
struct SoakObservation {
    var number: Int
    var arguments: [String]
    var previous: String?
    var namesBefore: [String]
    var latest: SoakVersion
    var productFolder: String
    var plannedSignal: String?
    /// The signal sent, and when (seconds after the start).
    var signal: (name: String, at: TimeInterval)?
    /// Seconds from the signal to the end.
    var endedAfterSignal: TimeInterval?
    /// Why the soak killed the run, when it had to.
    var forced: String?
    /// True when the soak was stopped during the run: it is neither checked nor counted.
    var abandoned = false
    var ended = false
    /// Exit status, or minus the signal that ended it.
    var status: Int32 = -1
    var duration: TimeInterval = 0
    var faults: [ServedFault] = []
    var behaved = 0
    var stdout = ""
    var stderr = ""

    init(run: SoakRun, productFolder: String) {
        number = run.number
        arguments = run.arguments
        previous = run.previous
        namesBefore = run.namesBefore
        latest = run.latest
        plannedSignal = run.signal.map { "\($0.name) \($0.trigger)" }
        self.productFolder = productFolder
    }

    /// The run, in lines, for a violation's report.
    var context: [String] {
        var lines = ["pkgtool " + arguments.joined(separator: " "),
                     "installed before: \(previous ?? "nothing"); latest published: \(latest.version) (\(latest.size) bytes)",
                     String(format: "exit %d after %.2f s", status, duration)
                         + (signal.map { String(format: "; %@ sent at %.2f s", $0.name, $0.at) } ?? "")
                         + (plannedSignal.map { " (planned: \($0))" } ?? "")]
        lines += faults.isEmpty ? ["no fault served"] : faults.map { "fault: \($0)" }
        // What sync said: its JSON report's diagnostics, or the end of its stderr.
        let report = (try? JSONSerialization.jsonObject(with: Data(stdout.utf8))) as? [String: Any] ?? [:]
        let products = report["products"] as? [[String: Any]] ?? []
        let diagnostics = (report["diagnostics"] as? [[String: Any]] ?? []) + products.flatMap { $0["diagnostics"] as? [[String: Any]] ?? [] }
        for product in products { lines.append("status: \(product["status"] ?? "?")") }
        for diagnostic in diagnostics { lines.append("diagnostic: [\(diagnostic["code"] ?? "?")] \(diagnostic["message"] ?? "")") }
        lines += stderr.split(separator: "\n").suffix(4).map { "stderr: " + $0 }
        return lines
    }
}
