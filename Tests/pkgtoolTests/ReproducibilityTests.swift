import Foundation
import Testing
import TestSupport

/// The same inputs give a byte-identical package, whatever the machine state around them.
@Suite(.offThePool) struct ReproducibilityTests {
    /// Makes the same tree in `folder`, in the given creation order, with the given umask and mtimes.
    private func makeTree(_ scratch: Scratch, _ folder: String, reversed: Bool, umask mask: mode_t, mtime: Date) throws {
        var files = [("a.txt", "alpha\n"), ("b/c.txt", "gamma\n"), ("b/d/e.csv", "1,2,3\n"), ("z.bin", String(repeating: "zz", count: 40_000))]
        if reversed { files.reverse() }
        let old = umask(mask)
        defer { umask(old) }
        try scratch.write("\(folder)/ContentInfo.plist", plist(id: "com.example.repro", version: "1.0"))
        for (name, text) in files {
            let path = scratch.path("\(folder)/Contents/\(name)")
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            try FileManager.default.setAttributes([.modificationDate: mtime], ofItemAtPath: path)
        }
    }

    @Test func copiesWithOtherMtimesOrderAndUmaskGiveIdenticalBytes() throws {
        let scratch = try Scratch()
        try makeTree(scratch, "one", reversed: false, umask: 0o022, mtime: Date(timeIntervalSince1970: 1_000_000))
        try makeTree(scratch, "two", reversed: true, umask: 0o077, mtime: Date())
        #expect(try CommandRunner.pkgtool(["create", scratch.path("one"), "-o", scratch.path("one.pkg")]).status == 0)
        #expect(try CommandRunner.pkgtool(["create", scratch.path("two"), "-o", scratch.path("two.pkg")]).status == 0)
        #expect(try scratch.read("one.pkg") == scratch.read("two.pkg"))
    }

    @Test func jobsDoNotChangeTheBytes() throws {
        let scratch = try Scratch()
        for index in 0..<60 {
            try scratch.write("src/Contents/f\(index).txt", String(repeating: "line \(index) of some text\n", count: 100 * (index % 7 + 1)))
        }
        try scratch.write("src/ContentInfo.plist", plist(id: "com.example.jobs", version: "1.0"))
        var outputs: [Data] = []
        for jobs in [1, 2, 4] {
            let out = scratch.path("j\(jobs).pkg")
            #expect(try CommandRunner.pkgtool(["create", scratch.path("src"), "--jobs", String(jobs), "-o", out]).status == 0)
            outputs.append(try Data(contentsOf: URL(fileURLWithPath: out)))
        }
        #expect(outputs[0] == outputs[1] && outputs[1] == outputs[2])
    }

    @Test func sourceDateEpochSetsEveryTimestamp() throws {
        let scratch = try Scratch()
        let source = try scratch.content("src")
        #expect(try CommandRunner.pkgtool(["create", source, "-o", scratch.path("e.pkg")], environment: ["SOURCE_DATE_EPOCH": "1700000000"]).status == 0)
        let listing = try CommandRunner.shell("TZ=UTC bsdtar -tvf e.pkg", in: scratch.url).stdout
        #expect(listing.split(separator: "\n").allSatisfy { $0.contains("Nov 14  2023") }, "\(listing)")
        #expect(try CommandRunner.pkgtool(["create", source, "-o", scratch.path("e2.pkg")], environment: ["SOURCE_DATE_EPOCH": "1700000000"]).status == 0)
        #expect(try scratch.read("e.pkg") == scratch.read("e2.pkg"))
    }
}
