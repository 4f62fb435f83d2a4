import PkgKit
import PkgKitArchive
import Testing

/// Registers libarchive's readers and writer (`PkgKitArchive`) before a suite runs, as the
/// `pkgtool` executable does at start-up: `@Suite(.libArchive)`. Registration is process-wide
/// and idempotent, so a suite that reads zip, tar or flat installer packages states that it does.
public struct LibArchiveTrait: SuiteTrait, TestTrait, TestScoping {
    public func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        LibArchiveSupport.register()
        try await function()
    }
}

extension Trait where Self == LibArchiveTrait {
    /// PkgKitArchive registered for this suite or test.
    public static var libArchive: Self { LibArchiveTrait() }
}
