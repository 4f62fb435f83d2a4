import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Fault injection for `pkgtool extract`, run against the built binary: SIGKILL at many points of
/// a large install, two installs racing into one product folder, a read-only Documents folder and
/// a full file system (both on real tmpfs mounts). After every fault the previous version and its
/// record must be intact and usable, and no half-written version may be visible.

// MARK: - Helpers

private func now() -> Double { Date().timeIntervalSinceReferenceDate }

/// True when another process holds the lock on `path` (an install in progress).
private func isLocked(_ path: String) -> Bool {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { return errno == EWOULDBLOCK }
    flock(fd, LOCK_UN)
    return false
}

// MARK: - Tests

@Suite(.offThePool) struct ExtractFaultTests {
    static let id = "com.example.faults"

    /// SIGKILL a 250 MB install at many points: the record always names a complete version,
    /// 1.0 is never touched, no incomplete 2.0 is ever visible, and a rerun finishes the job.
    @Test(.timeLimit(.minutes(2)))
    func killedAtAnyPointLeavesACompleteVersion() throws {
        let started = now()
        let scratch = try Scratch()
        let id = Self.id
        // Version 1.0: small.
        var small: [String: Data] = ["readme.txt": Data("version one\n".utf8), "data/one.bin": randomData(100_000)]
        for i in 0..<50 { small["pages/p\(i).txt"] = Data("page \(i) of 1.0\n".utf8) }
        let v1 = try scratch.package("v1", id: id, version: "1.0", files: small, extraArguments: ["--compression", "none"])

        // Version 2.0: 6 × 40 MB of random data plus 3,000 small files (≈ 250 MB), written by head(1).
        let bigSource = scratch.path("src-v2")
        try FileManager.default.createDirectory(atPath: bigSource + "/Contents/media", withIntermediateDirectories: true)
        try CommandRunner.shell("for i in 1 2 3 4 5 6; do head -c 41943040 /dev/urandom > media/big$i.bin; done",
                                in: URL(fileURLWithPath: bigSource + "/Contents"))
        for i in 0..<3000 {
            let file = bigSource + "/Contents/pages/\(i % 30)/p\(i).txt"
            if i < 30 {
                try FileManager.default.createDirectory(atPath: (file as NSString).deletingLastPathComponent,
                                                        withIntermediateDirectories: true)
            }
            try (Data("page \(i) of 2.0\n".utf8) + randomData(i % 700)).write(to: URL(fileURLWithPath: file))
        }
        try Data("version two\n".utf8).write(to: URL(fileURLWithPath: bigSource + "/Contents/readme.txt"))
        let v2 = try scratch.build("v2", source: bigSource, id: id, version: "2.0", extraArguments: ["--compression", "none"])
        let expected1 = snapshot(v1.contents), expected2 = snapshot(v2.contents)
        let prepared = now()

        let documents = scratch.path("Documents")
        let product = documents + "/" + id
        let install1 = try CommandRunner.pkgtool(["extract", v1.pkg, "--documents", documents])
        try #require(install1.status == 0, "\(install1.stderr)")

        /// The checks after every kill. Returns what the kill left, for the log.
        func checkState(_ label: String) -> String {
            let record = readRecord(product)
            #expect(record != nil, "\(label): the record does not parse")
            guard let record else { return "record unreadable" }
            #expect(record.id == id, "\(label): record names product \(record.id)")
            #expect(record.version == "1.0" || record.version == "2.0", "\(label): record names \(record.version)")
            // Version 1.0 is never touched, whatever the record says.
            #expect(differences(product + "/1.0", expected: expected1) == [], "\(label): 1.0 damaged")
            // A 2.0 folder that exists is complete; the one the record names must exist.
            if record.version == "2.0" || exists(product + "/2.0") {
                #expect(differences(product + "/2.0", expected: expected2) == [], "\(label): 2.0 incomplete")
            }
            // Nothing else that looks like a version.
            let unexpected = names(product).filter {
                !["1.0", "2.0", "ContentInfo.plist", ".lock"].contains($0) && !$0.hasPrefix(".staging-")
                    && !$0.hasPrefix(".ContentInfo.plist.tmp-")
            }
            #expect(unexpected == [], "\(label): unexpected entries \(unexpected)")
            return "record \(record.version), 2.0 folder \(exists(product + "/2.0") ? "present" : "absent"), "
                + "\(stagingLeftovers(product).count) staging"
        }

        /// Back to "1.0 current, no 2.0" through the tool itself; this run also clears leftovers.
        func reset(_ label: String) throws {
            let result = try CommandRunner.pkgtool(["extract", v1.pkg, "--documents", documents,
                                                    "--allow-downgrade", "--keep", "1"])
            #expect(result.status == 0, "\(label): reset failed: \(result.stderr)")
            #expect(readRecord(product)?.version == "1.0")
            #expect(!exists(product + "/2.0"))
            #expect(stagingLeftovers(product) == [], "\(label): the next run left staging folders")
        }

        /// A moment of the install to kill it at, told by what the install has done by then, and
        /// whether the install must still be running there (the later moments may pass between
        /// two looks: then what the test checks is only that nothing is half done).
        struct Trigger {
            var label: String
            var mustFire: Bool
            var reached: (BackgroundCommand) -> Bool
            /// What the kill must have left, beyond `checkState`'s invariants.
            var expect: (String) -> Void
        }
        let untouched: (String) -> Void = { label in
            #expect(readRecord(product)?.version == "1.0", "\(label): the record moved on")
            #expect(!exists(product + "/2.0"), "\(label): a 2.0 folder appeared")
        }
        let triggers = [
            Trigger(label: "lock taken, before staging", mustFire: true, reached: { _ in isLocked(product + "/.lock") },
                    expect: untouched),
            Trigger(label: "staging appears", mustFire: true, reached: { _ in !stagingLeftovers(product).isEmpty }, expect: { label in
                untouched(label)
                #expect(stagingLeftovers(product).count == 1, "\(label): \(names(product))")
            }),
            Trigger(label: "100 MB written", mustFire: true, reached: { ($0.bytesWritten ?? 0) > 100_000_000 }, expect: { label in
                untouched(label)
                #expect(stagingLeftovers(product).count == 1, "\(label): \(names(product))")
            }),
            Trigger(label: "2.0 appears", mustFire: false, reached: { _ in exists(product + "/2.0") }, expect: { label in
                #expect(exists(product + "/2.0"), "\(label): 2.0 is gone")
            }),
            Trigger(label: "record names 2.0", mustFire: false, reached: { _ in readRecord(product)?.version == "2.0" }, expect: { label in
                #expect(readRecord(product)?.version == "2.0", "\(label): \(names(product))")
            }),
        ]
        var log: [String] = []
        for (index, trigger) in triggers.enumerated() {
            let extract = try BackgroundCommand(["extract", v2.pkg, "--documents", documents], in: scratch)
            let start = now()
            let reached = waitUntil { !extract.isRunning || trigger.reached(extract) } && extract.isRunning
            extract.send(SIGKILL)
            let killed = extract.finish().killedBySignal
            let label = "kill at \(trigger.label)"
            if trigger.mustFire {
                #expect(reached && killed, "\(label): the install ended before it got there")
            }
            trigger.expect(label)
            let state = checkState(label)
            log.append("\(label) (+\(String(format: "%.0f", (now() - start) * 1000)) ms, \(killed ? "killed" : "already done")): \(state)")
            if index < triggers.count - 1 { try reset("after \(label)") }
        }

        // A clean rerun finishes the job and clears what the last kill left.
        let rerunStart = now()
        let rerun = try CommandRunner.pkgtool(["extract", v2.pkg, "--documents", documents])
        #expect(rerun.status == 0, "\(rerun.stderr)")
        #expect(readRecord(product)?.version == "2.0")
        #expect(differences(product + "/2.0", expected: expected2) == [])
        #expect(differences(product + "/1.0", expected: expected1) == [])
        #expect(stagingLeftovers(product) == [])
        let unexpected = names(product).filter { !["1.0", "2.0", "ContentInfo.plist", ".lock"].contains($0) }
        #expect(unexpected == [], "leftovers after the rerun: \(unexpected)")
        print("ExtractFault crash: prepared in \(String(format: "%.1f", prepared - started)) s, "
              + "clean 250 MB extract \(String(format: "%.1f", now() - rerunStart)) s, total \(String(format: "%.1f", now() - started)) s")
        for line in log { print("ExtractFault crash: " + line) }
    }

    /// Ctrl-C (SIGINT) or SIGTERM while a version is being staged: extract removes its staging
    /// folder before it exits (130 / 143), and the installed version stays current and intact.
    @Test(.timeLimit(.minutes(2)), arguments: [SIGINT, SIGTERM])
    func interruptedExtractRemovesItsStaging(_ signalNumber: Int32) throws {
        let scratch = try Scratch()
        let id = Self.id
        let v1 = try scratch.package("v1", id: id, version: "1.0", files: ["a.txt": Data("one\n".utf8)], extraArguments: ["--compression", "none"])
        var big: [String: Data] = [:]
        for i in 0..<12 { big["media/m\(i).bin"] = randomData(8_000_000) }
        let v2 = try scratch.package("v2", id: id, version: "2.0", files: big)
        let documents = scratch.documents
        let product = documents + "/" + id
        #expect(try CommandRunner.pkgtool(["extract", v1.pkg, "--documents", documents]).status == 0)
        let expected1 = snapshot(v1.contents)

        let extract = try BackgroundCommand(["extract", v2.pkg, "--documents", documents], in: scratch)
        let staging = waitUntil { !extract.isRunning || !stagingLeftovers(product).isEmpty } && extract.isRunning
        try #require(staging, "the extract finished before it could be interrupted")
        extract.send(signalNumber)
        let (result, killed) = extract.finish()
        #expect(!killed && result.status == 128 + signalNumber, "\(result.stderr)")
        #expect(result.stderr.contains("extract: interrupted; nothing was installed; the previous version stays current"), "\(result.stderr)")
        #expect(stagingLeftovers(product) == [])
        #expect(names(product) == [".lock", "1.0", "ContentInfo.plist"])
        #expect(readRecord(product)?.version == "1.0")
        #expect(differences(product + "/1.0", expected: expected1).isEmpty)
    }

    /// 1.1 and 1.2 started at the same moment into one Documents folder. The lock serialises them:
    /// 1.2 always installs; 1.1 installs first or is refused as a downgrade (exit 1). The record
    /// names 1.2, every version folder is complete, no staging is left.
    @Test(.timeLimit(.minutes(2)))
    func concurrentExtractsAreSerialised() throws {
        let started = now()
        let scratch = try Scratch()
        let id = Self.id
        func files(_ tag: String) -> [String: Data] {
            var result: [String: Data] = ["big/a.bin": randomData(2_000_000), "big/b.bin": randomData(1_500_000),
                                          "readme.txt": Data("version \(tag)\n".utf8)]
            for i in 0..<200 { result["pages/p\(i).txt"] = Data("page \(i) of \(tag)\n".utf8) + randomData(i * 3) }
            return result
        }
        let v11 = try scratch.package("v11", id: id, version: "1.1", files: files("1.1"), extraArguments: ["--compression", "none"])
        let v12 = try scratch.package("v12", id: id, version: "1.2", files: files("1.2"), extraArguments: ["--compression", "none"])
        let expected11 = snapshot(v11.contents), expected12 = snapshot(v12.contents)
        var outcomes: [String] = []
        for round in 0..<5 {
            let documents = scratch.path("Documents-\(round)")
            let product = documents + "/" + id
            // Alternate which one is started first.
            func start(_ version: String, _ pkg: String) throws -> BackgroundCommand {
                try BackgroundCommand(["extract", pkg, "--documents", documents], in: scratch, name: "out-\(version)-\(round)")
            }
            let p11: BackgroundCommand, p12: BackgroundCommand
            if round % 2 == 0 {
                p11 = try start("11", v11.pkg)
                p12 = try start("12", v12.pkg)
            } else {
                p12 = try start("12", v12.pkg)
                p11 = try start("11", v11.pkg)
            }
            let (result11, killed11) = p11.finish(), (result12, killed12) = p12.finish()
            let text11 = result11.stdout + result11.stderr, text12 = result12.stdout + result12.stderr
            let label = "round \(round)"
            #expect(!killed12 && result12.status == 0, "\(label): 1.2 failed: \(text12)")
            #expect(!killed11 && [0, 1].contains(result11.status), "\(label): 1.1: \(text11)")
            if result11.status == 1 {
                // Ran second: a downgrade, refused, nothing written.
                #expect(text11.contains("downgrade"), "\(label): 1.1 exit 1 without a downgrade message: \(text11)")
                #expect(!exists(product + "/1.1"), "\(label): a refused 1.1 left a folder")
            } else {
                #expect(differences(product + "/1.1", expected: expected11) == [], "\(label): 1.1 incomplete")
            }
            #expect(readRecord(product)?.version == "1.2", "\(label): record names \(readRecord(product)?.version ?? "nothing")")
            #expect(differences(product + "/1.2", expected: expected12) == [], "\(label): 1.2 incomplete")
            let unexpected = names(product).filter { !["1.1", "1.2", "ContentInfo.plist", ".lock"].contains($0) }
            #expect(unexpected == [], "\(label): leftovers \(unexpected)")
            outcomes.append(result11.status == 0 ? "1.1 then 1.2" : "1.2 then 1.1 refused")
        }
        print("ExtractFault concurrent: \(outcomes.joined(separator: "; ")) in \(String(format: "%.1f", now() - started)) s")
    }

    /// A read-only Documents folder (tmpfs remounted read-only): exit 2, a message naming the
    /// path and the cause, 1.0 and its record untouched.
    @Test(.timeLimit(.minutes(2)), .enabled(if: Scratch.canMount, "mounting a tmpfs needs root"))
    func readOnlyDocumentsExitsTwo() throws {
        let scratch = try Scratch()
        let id = Self.id
        let v10 = try scratch.package("v10", id: id, version: "1.0", files: ["a.txt": Data("one\n".utf8), "b/c.bin": randomData(10_000)], extraArguments: ["--compression", "none"])
        let v11 = try scratch.package("v11", id: id, version: "1.1", files: ["a.txt": Data("two\n".utf8), "b/c.bin": randomData(20_000)], extraArguments: ["--compression", "none"])
        let mount = try scratch.mountTmpfs("mnt-ro", size: "64m")
        defer { Scratch.unmount(mount) }
        let documents = mount + "/Documents"
        let product = documents + "/" + id
        let first = try CommandRunner.pkgtool(["extract", v10.pkg, "--documents", documents])
        try #require(first.status == 0, "\(first.stderr)")
        let expected10 = snapshot(v10.contents)
        let before = snapshot(product)
        try CommandRunner.shell("mount -o remount,ro '\(mount)'")

        let result = try CommandRunner.pkgtool(["extract", v11.pkg, "--documents", documents])
        #expect(result.status == 2, "exit \(result.status): \(result.stdout) \(result.stderr)")
        #expect(result.stderr.contains(product), "the message should name the path: \(result.stderr)")
        #expect(result.stderr.contains("Read-only file system"), "the message should give the cause: \(result.stderr)")
        #expect(snapshot(product) == before, "the product folder changed")
        #expect(readRecord(product)?.version == "1.0")
        #expect(differences(product + "/1.0", expected: expected10) == [])
        #expect(!exists(product + "/1.1"))

        // Also a product that was never installed there: exit 2, nothing created.
        let other = try scratch.package("other", id: "com.example.other", version: "1.0", files: ["x.txt": Data("x\n".utf8)], extraArguments: ["--compression", "none"])
        let fresh = try CommandRunner.pkgtool(["extract", other.pkg, "--documents", documents])
        #expect(fresh.status == 2, "exit \(fresh.status): \(fresh.stderr)")
        #expect(fresh.stderr.contains(documents + "/com.example.other"), "\(fresh.stderr)")
        #expect(!exists(documents + "/com.example.other"))
    }

    /// Extracting the installed version again into a read-only Documents folder has nothing to
    /// write: `unchanged`, exit 0, whether the lock file is there or not (issue 21, item 13:
    /// it was "cannot open the lock file", exit 2).
    @Test(.timeLimit(.minutes(2)), .enabled(if: Scratch.canMount, "mounting a tmpfs needs root"))
    func sameVersionOnReadOnlyDocumentsIsUnchanged() throws {
        let scratch = try Scratch()
        let v10 = try scratch.package("v10", id: Self.id, version: "1.0", files: ["a.txt": Data("one\n".utf8)])
        let mount = try scratch.mountTmpfs("mnt-ro", size: "16m")
        defer { Scratch.unmount(mount) }
        let documents = mount + "/Documents"
        let first = try CommandRunner.pkgtool(["extract", v10.pkg, "--documents", documents])
        try #require(first.status == 0, "\(first.stderr)")
        for lockFile in [true, false] {
            if !lockFile {
                try CommandRunner.shell("mount -o remount,rw '\(mount)' && rm '\(documents)/\(Self.id)/.lock'")
            }
            let before = snapshot(documents)
            try CommandRunner.shell("mount -o remount,ro '\(mount)'")
            let again = try CommandRunner.pkgtool(["extract", v10.pkg, "--documents", documents, "--json"])
            #expect(again.status == 0, "lock file \(lockFile): \(again.stdout) \(again.stderr)")
            #expect(again.json["status"] as? String == "unchanged", "lock file \(lockFile): \(again.stdout)")
            #expect(snapshot(documents) == before)
        }
    }

    /// A file system without room (8 MB tmpfs, 20 MB payload): exit 2 with `insufficient-space`
    /// before anything is written, 1.0 and its record intact, no staging folder, no space taken.
    @Test(.timeLimit(.minutes(2)), .enabled(if: Scratch.canMount, "mounting a tmpfs needs root"))
    func diskFullExitsTwoAndCleansUp() throws {
        let scratch = try Scratch()
        let id = Self.id
        let v10 = try scratch.package("v10", id: id, version: "1.0", files: ["a.txt": Data("one\n".utf8), "b/c.bin": randomData(200_000)], extraArguments: ["--compression", "none"])
        var bigFiles: [String: Data] = ["a.txt": Data("two\n".utf8)]
        for i in 0..<5 { bigFiles["media/part\(i).bin"] = randomData(4_000_000) }
        for i in 0..<100 { bigFiles["pages/p\(i).txt"] = Data("page \(i)\n".utf8) }
        let v11 = try scratch.package("v11", id: id, version: "1.1", files: bigFiles, extraArguments: ["--compression", "none"])
        let mount = try scratch.mountTmpfs("mnt-full", size: "8m")
        defer { Scratch.unmount(mount) }
        let documents = mount + "/Documents"
        let product = documents + "/" + id
        let first = try CommandRunner.pkgtool(["extract", v10.pkg, "--documents", documents])
        try #require(first.status == 0, "\(first.stderr)")
        let expected10 = snapshot(v10.contents)
        let before = snapshot(product)
        let freeBefore = freeBytes(mount)

        for attempt in 0..<2 {
            let result = try CommandRunner.pkgtool(["extract", v11.pkg, "--documents", documents])
            #expect(result.status == 2, "attempt \(attempt): exit \(result.status): \(result.stdout) \(result.stderr)")
            #expect(result.stderr.contains("error[insufficient-space]"), "attempt \(attempt): \(result.stderr)")
            #expect(result.stderr.contains("needs 20.0 MB (unpacked)"), "attempt \(attempt): \(result.stderr)")
            #expect(result.stderr.contains(product), "attempt \(attempt): the message should name the path: \(result.stderr)")
            #expect(readRecord(product)?.version == "1.0")
            #expect(differences(product + "/1.0", expected: expected10) == [])
            #expect(snapshot(product) == before, "attempt \(attempt): the product folder changed: \(names(product))")
            #expect(stagingLeftovers(product) == [])
            #expect(!exists(product + "/1.1"))
            #expect(freeBytes(mount) == freeBefore, "attempt \(attempt): \(freeBefore) bytes free before, \(freeBytes(mount)) after")
        }
        // The same tool still works on that file system once the version fits.
        let v12 = try scratch.package("v12", id: id, version: "1.2", files: ["a.txt": Data("three\n".utf8)], extraArguments: ["--compression", "none"])
        let fits = try CommandRunner.pkgtool(["extract", v12.pkg, "--documents", documents])
        #expect(fits.status == 0, "\(fits.stderr)")
        #expect(readRecord(product)?.version == "1.2")
    }
}
