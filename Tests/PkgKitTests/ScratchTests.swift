import Foundation
import Testing
import TestSupport

/// A test leaves nothing behind in the system's temporary folder (issue 21, item 17: a tree
/// deeper than the system's path limit, as `overLongFolderIsOneFindingNotAnIOError` makes, stayed).
@Suite struct ScratchTests {
    @Test func aTreeDeeperThanThePathLimitIsRemoved() throws {
        var root = ""
        do {
            let scratch = try Scratch()
            root = scratch.root
            let name = String(repeating: "d", count: 200)
            // 25 levels of 200 bytes: past PATH_MAX (4096), made one level at a time relative
            // to the level above (no path that long can be named whole).
            var folder = open(scratch.root, O_RDONLY | O_DIRECTORY)
            for _ in 0..<25 {
                #expect(mkdirat(folder, name, 0o755) == 0)
                let inner = openat(folder, name, O_RDONLY | O_DIRECTORY)
                close(folder)
                folder = inner
            }
            let file = openat(folder, "f", O_WRONLY | O_CREAT, 0o644)
            #expect(file >= 0)
            close(file)
            close(folder)
        }
        #expect(!exists(root), "\(root) is left behind")
    }
}
