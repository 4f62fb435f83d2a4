import Foundation
import Testing
import TestSupport

/// A failed create never damages an existing package and leaves no temporary file.
@Suite(.offThePool) struct FailureSafetyTests {
    private func leftovers(_ folder: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.contains("tmp") || $0.hasPrefix(".") }
    }

    @Test func failedCreatesLeaveTheExistingOutputIntact() throws {
        let scratch = try Scratch()
        let good = try scratch.content("good", id: "com.example.safe", version: "1.0")
        try FileManager.default.createDirectory(atPath: scratch.path("out"), withIntermediateDirectories: true)
        let output = scratch.path("out/com.example.safe.pkg")
        #expect(try CommandRunner.pkgtool(["create", good, "-o", output]).status == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: output))

        try scratch.content("exe", id: "com.example.safe", version: "1.1")
        try scratch.write("exe/Contents/tool", Data([0x7F, 0x45, 0x4C, 0x46, 2, 1, 1, 0]))
        let executable = try CommandRunner.pkgtool(["create", scratch.path("exe"), "-o", output])
        #expect(executable.status == 1)
        #expect(executable.stderr.contains("error[executable-code] Contents/tool"))

        try scratch.content("badversion", id: "com.example.safe", version: "1.x")
        #expect(try CommandRunner.pkgtool(["create", scratch.path("badversion"), "-o", output]).status == 1)

        #expect(try Data(contentsOf: URL(fileURLWithPath: output)) == before)
        #expect(try leftovers(scratch.path("out")).isEmpty)
    }

    @Test func unwritableFolderExitsTwoWithoutDamage() throws {
        let scratch = try Scratch()
        let source = try scratch.content("src")
        // A path whose parent is a regular file cannot be written, even by root.
        try scratch.write("blocker", "i am a file")
        let result = try CommandRunner.pkgtool(["create", source, "-o", scratch.path("blocker/out.pkg")])
        #expect(result.status == 2)
        #expect(result.stderr.contains("blocker"))
        #expect(try scratch.read("blocker") == Data("i am a file".utf8))
    }

    @Test func createKilledMidWriteLeavesNothingBehind() throws {
        let scratch = try Scratch()
        let source = try scratch.content("src", id: "com.example.kill", version: "1.0")
        try CommandRunner.shell("head -c 120000000 /dev/urandom > src/Contents/big.bin", in: scratch.url)
        try FileManager.default.createDirectory(atPath: scratch.path("out"), withIntermediateDirectories: true)
        let output = scratch.path("out/kill.pkg")
        try scratch.write("out/kill.pkg", "the previous package")
        // Killed once writing has begun, and again once half the package is written: told by
        // the bytes the process has written, not by a guessed delay.
        for (label, bytes) in [("writing begun", Int64(1 << 20)), ("60 MB written", Int64(60_000_000))] {
            let create = try BackgroundCommand(["create", source, "--compression", "zlib", "--level", "9", "--jobs", "1",
                                                "-o", output, "--quiet"], in: scratch, name: "create")
            let reached = waitUntil { !create.isRunning || (create.bytesWritten ?? 0) > bytes } && create.isRunning
            create.send(SIGKILL)
            let killed = create.finish().killedBySignal
            #expect(reached && killed, "\(label): create finished before it could be killed")
            #expect(try scratch.read("out/kill.pkg") == Data("the previous package".utf8), "\(label)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path("out")) == ["kill.pkg"], "\(label)")
        }
    }
}
