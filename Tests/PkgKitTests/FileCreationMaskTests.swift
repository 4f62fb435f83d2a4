import Foundation
@testable import PkgKitInstall
import Testing

/// The umask as an install reads it, to know whether each new file needs `fchmod`.
struct FileCreationMaskTests {
    #if os(Linux)
    /// The mask as the kernel shows it, read the plain way.
    static func shown() throws -> mode_t {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("Umask:") })
        return try #require(mode_t(line.dropFirst("Umask:".count).trimmingCharacters(in: .whitespaces), radix: 8))
    }

    @Test func theMaskIsTheOneTheKernelShows() throws {
        // Another test may set the umask for a moment: a read between two equal showings counts.
        for _ in 0..<100 {
            let before = try Self.shown(), read = FileCreationMask.current()
            guard try Self.shown() == before else { continue }
            #expect(read == before)
            return
        }
        Issue.record("the umask never held still")
    }
    #endif

    @Test func aModeIsKeptOnlyWhenTheMaskClearsNoneOfItsBits() {
        #expect(FileCreationMask.keeps(0o644, under: 0o022))
        #expect(FileCreationMask.keeps(0o644, under: 0o002))
        #expect(!FileCreationMask.keeps(0o644, under: 0o077))
        #expect(!FileCreationMask.keeps(0o644, under: 0o004))
        #expect(!FileCreationMask.keeps(0o644, under: nil), "an unknown mask: the mode is set")
    }
}
