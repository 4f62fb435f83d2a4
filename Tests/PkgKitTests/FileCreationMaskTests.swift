import Foundation
@testable import PkgKitInstall
import Testing
import TestSupport

/// The umask as an install reads it, to know whether each new file needs `fchmod`.
@Suite(.offThePool) struct FileCreationMaskTests {
    #if os(Linux)
    /// The mask a child process inherits, as the shell prints it.
    static func shown() throws -> mode_t {
        let result = try CommandRunner.run("/bin/sh", ["-c", "umask"], deadline: .seconds(30))
        return try #require(mode_t(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines), radix: 8))
    }

    @Test func theMaskIsTheOneAChildProcessInherits() throws {
        // Another test may set the umask for a moment: a read between two equal showings counts.
        for _ in 0..<20 {
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
