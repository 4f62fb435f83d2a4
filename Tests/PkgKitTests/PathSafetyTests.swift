import Testing
@testable import PkgKit

/// `unsafe-path`'s judgement of raw archive paths, one case per reason.
@Suite struct PathSafetyTests {
    @Test(arguments: [
        ("Contents/a.txt", nil),
        ("./Contents/a.txt", nil),
        ("Contents/dir/", nil),
        ("Contents/caf\u{E9}/\u{1F600}.png", nil),
        ("Contents/a..b/.hidden", nil),
        ("/etc/passwd", "absolute path"),
        ("Contents//a.txt", "empty component"),
        ("Contents/../a.txt", "'..'"),
        ("..", "'..'"),
        ("Contents/./a.txt", "'.' component"),
        ("Contents/a\u{7F}b", "control character 0x7f"),
        ("Contents/a\nb\u{1}", "control character 0xa"),
        ("Contents/" + String(repeating: "n", count: 256), "256 bytes long"),
    ] as [(String, String?)])
    func textPaths(path: String, problem: String?) {
        let found = PathSafety.problem(with: Array(path.utf8))
        if let problem {
            #expect(found?.contains(problem) == true, "\(path): \(found ?? "nil")")
        } else {
            #expect(found == nil, "\(path): \(found ?? "nil")")
        }
    }

    @Test func bytesThatAreNotText() {
        // A NUL is named before any other control character in the same path.
        #expect(PathSafety.problem(with: Array("Contents/a\u{1}b".utf8) + [0])?.contains("NUL") == true)
        #expect(PathSafety.problem(with: Array("Contents/".utf8) + [0xC3, 0x28])?.contains("not valid UTF-8") == true)
        #expect(PathSafety.problem(with: Array("Contents/".utf8) + [0xFF])?.contains("not valid UTF-8") == true)
        #expect(PathSafety.problem(with: Array(repeating: UInt8(ascii: "a"), count: PackageLimits.maxPathBytes + 1))?.contains("keep paths within") == true)
    }
}
