import Foundation
import Testing
@testable import PkgKit

/// `create` looks for executable code while its folder walk is still going: the files arrive in
/// runs, and the scan must find the same formats and refuse the same unreadable file as reading
/// the finished list one file after another, whatever the threads do.
@Suite struct ExecutableScanTests {
    static let elf: [UInt8] = [0x7F, 0x45, 0x4C, 0x46, 2, 1, 1, 0]
    static let script = Array("#!/bin/sh\necho hi\n".utf8)

    func item(_ name: String, _ bytes: [UInt8]) -> SourceItem {
        SourceItem(path: ArchivePath("Contents/\(name)"), kind: .file, mode: 0o644, size: Int64(bytes.count), origin: .data(bytes))
    }

    /// A file the scan must open, which is not there.
    func missing(_ name: String, in folder: String) -> SourceItem {
        SourceItem(path: ArchivePath("Contents/\(name)"), kind: .file, mode: 0o644, size: 10,
                   origin: .file(Array("\(folder)/\(name)".utf8)))
    }

    /// 1,000 files, three of them code, in runs of different lengths; folders pass over.
    func package() -> [SourceItem] {
        var items = (0..<1000).map { item("f\($0).txt", Array("plain text \($0)".utf8)) }
        items[3] = item("f3.txt", Self.elf)
        items[700] = item("f700.txt", Self.script)
        items[999] = item("f999.txt", Self.elf)
        items.insert(SourceItem(path: ArchivePath("Contents/folder"), kind: .directory, mode: 0o755, size: 0, origin: .none), at: 500)
        return items
    }

    @Test(arguments: [1, 2, 4])
    func runsAddedAsAWalkGoesFindWhatTheWholeListHas(jobs: Int) throws {
        let items = package()
        let scan = ExecutableScan(jobs: jobs)
        var start = 0
        for length in [1, 300, 17, 256, 255, 600] where start < items.count {
            scan.add(items[start..<min(start + length, items.count)])
            start += length
        }
        let found = try scan.finish()
        #expect(found == [ArchivePath("Contents/f3.txt"): .elf, ArchivePath("Contents/f700.txt"): .script,
                          ArchivePath("Contents/f999.txt"): .elf])
        let whole = ExecutableScan(jobs: jobs)
        whole.add(items)
        #expect(try whole.finish() == found)
    }

    /// Two unreadable files in different blocks: the earlier one is named, even when a thread
    /// reaches the later one first.
    @Test(arguments: [1, 2, 4])
    func theFirstUnreadableFileInOrderIsThrown(jobs: Int) throws {
        let folder = FileManager.default.temporaryDirectory.path + "/no-such-folder-\(UUID().uuidString)"
        var items = package()
        items[600] = missing("late.bin", in: folder)
        items[20] = missing("early.bin", in: folder)
        let scan = ExecutableScan(jobs: jobs)
        scan.add(items[0..<300])
        scan.add(items[300...])
        #expect {
            try scan.finish()
        } throws: { error in
            "\(error)".contains("early.bin") && !"\(error)".contains("late.bin")
        }
    }

    /// The walk hands every item over, in order, as it lists them.
    @Test func theWalkHandsOverEveryItemInOrder() throws {
        let root = FileManager.default.temporaryDirectory.path + "/walk-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: root) }
        for folder in 0..<5 {
            try FileManager.default.createDirectory(atPath: "\(root)/d\(folder)/inner", withIntermediateDirectories: true)
            for file in 0..<130 { try Data("x".utf8).write(to: URL(fileURLWithPath: "\(root)/d\(folder)/inner/f\(file)")) }
        }
        var runs: [[String]] = []
        try FolderWalker.walk(root: Array(root.utf8), prefix: Array("Contents".utf8)) { run in
            runs.append(run.map(\.path.string))
        }
        let items = try FolderWalker.walk(root: Array(root.utf8), prefix: Array("Contents".utf8))
        #expect(runs.flatMap { $0 } == items.map(\.path.string))
        #expect(items.count == 5 * 132)
        #expect(runs.count > 1)
        #expect(runs.dropLast().allSatisfy { $0.count >= 256 })
    }
}
