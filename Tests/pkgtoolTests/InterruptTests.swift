import Foundation
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// One answer to Ctrl-C and SIGTERM in every command (issue 21, item 12): a line saying what
/// was left as it was, and exit 130 / 143. Each test interrupts the command at a moment told by
/// what it has done (bytes written, a folder appearing, waiting on a FIFO), never after a guessed delay.
@Suite(.offThePool) struct InterruptTests {
    /// A create writing a large package: the previous package at the output stays as it was.
    @Test(arguments: [SIGINT, SIGTERM])
    func create(_ signalNumber: Int32) throws {
        let s = try Scratch()
        let source = try s.content("src", id: "com.example.stop", version: "1.0")
        try s.write("src/Contents/big.bin", randomData(80_000_000))
        try s.write("out/x.pkg", "the previous package")
        let create = try BackgroundCommand(["create", source, "--compression", "zlib", "--level", "9", "--jobs", "1",
                                            "-o", s.path("out/x.pkg")], in: s)
        let writing = waitUntil { !create.isRunning || (create.bytesWritten ?? 0) > 1 << 20 } && create.isRunning
        try #require(writing, "create finished before it could be interrupted")
        create.send(signalNumber)
        let (result, killed) = create.finish()
        #expect(!killed && result.status == 128 + signalNumber, "\(result.stderr)")
        #expect(result.stderr.contains("create: interrupted; nothing was written, \(s.path("out/x.pkg")) is as it was"),
                "\(result.stderr)")
        #expect(s.text("out/x.pkg") == "the previous package")
        #expect(s.list("out") == ["x.pkg"])
    }

    /// A validate blocked opening its input (a FIFO no one writes): it stops all the same.
    @Test func validate() throws {
        let s = try Scratch()
        let fifo = s.path("input.pkg")
        try #require(mkfifo(fifo, 0o644) == 0)
        let validate = try BackgroundCommand(["validate", fifo], in: s)
        let blocked = waitUntil { validate.isWaitingToOpenAFIFO || !validate.isRunning } && validate.isRunning
        try #require(blocked, "validate never opened its input")
        validate.send(SIGINT)
        let (result, killed) = validate.finish()
        #expect(!killed && result.status == 130, "\(result.stderr)")
        #expect(result.stderr.contains("validate: interrupted; nothing was changed"), "\(result.stderr)")
    }

    /// A publish copying a large package into the published folder stops before the catalog
    /// names it: the package's folder, made for the copy, is removed again and the published
    /// folder is as it was.
    @Test(arguments: [SIGINT, SIGTERM])
    func publish(_ signalNumber: Int32) throws {
        let s = try Scratch()
        let small = try s.package("small", id: "com.example.small", version: "1.0", text: ["a.txt": "hello\n"])
        let big = try s.package("big", id: "com.example.big", version: "1.0", files: ["big.bin": randomData(64 << 20)],
                                extraArguments: ["--compression", "none"]).pkg
        let dir = s.path("pub")
        #expect(try CommandRunner.pkgtool(["publish", small, "--to", dir]).status == 0)
        let before = snapshot(dir)
        let publish = try BackgroundCommand(["publish", big, "--to", dir], in: s)
        // The product's folder appears just before the copy into it starts.
        let copying = waitUntil { !publish.isRunning || exists(dir + "/com.example.big") } && publish.isRunning
        try #require(copying, "publish finished before it could be interrupted")
        publish.send(signalNumber)
        let (result, killed) = publish.finish()
        #expect(!killed && result.status == 128 + signalNumber, "\(result.stderr)")
        #expect(result.stderr.contains("publish: interrupted; nothing was published; \(dir) is as it was"), "\(result.stderr)")
        #expect(snapshot(dir) == before)
    }

    /// A conversion writing its staging folder stops there, removes it, and leaves the output
    /// folder as it was.
    @Test func convert() throws {
        let s = try Scratch()
        var files: [String: Data] = [:]
        for i in 0..<12 { files["media/m\(i).bin"] = randomData(8_000_000) }
        let pkg = try s.package("big", id: "com.example.big", version: "1.0", files: files, extraArguments: ["--compression", "none"]).pkg
        try s.write("out/keep.txt", "mine\n")
        let before = snapshot(s.path("out"))
        let convert = try BackgroundCommand(["convert", pkg, "--to", "background-assets", "--out", s.path("out")], in: s)
        let staging = waitUntil {
            !convert.isRunning || s.list("out").contains { $0.hasPrefix(".pkgtool-convert-") }
        } && convert.isRunning
        try #require(staging, "the conversion finished before it could be interrupted")
        convert.send(SIGTERM)
        let (result, killed) = convert.finish()
        #expect(!killed && result.status == 143, "\(result.stderr)")
        #expect(result.stderr.contains("convert: interrupted; nothing was converted; \(s.path("out")) is as it was"), "\(result.stderr)")
        #expect(snapshot(s.path("out")) == before)
    }
}
