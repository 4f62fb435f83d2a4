import Foundation
import PkgKit
import Testing

/// `@Nullable`, the one way reports write an absent value: always as `null`, never by leaving the
/// key out (SPEC section 5); and read back from `null` or a missing key alike.
@Suite struct NullableTests {
    private struct Report: Codable, Equatable {
        var status: String
        @Nullable var previousVersion: String?
    }

    @Test func nilIsWrittenAsNull() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let absent = try encoder.encode(Report(status: "installed", previousVersion: nil))
        #expect(String(decoding: absent, as: UTF8.self) == #"{"previousVersion":null,"status":"installed"}"#)
        let present = try encoder.encode(Report(status: "installed", previousVersion: "1.0"))
        #expect(String(decoding: present, as: UTF8.self) == #"{"previousVersion":"1.0","status":"installed"}"#)
    }

    @Test func nullAndAMissingKeyReadAsNil() throws {
        let decoder = JSONDecoder()
        #expect(try decoder.decode(Report.self, from: Data(#"{"status":"x","previousVersion":null}"#.utf8)) == Report(status: "x", previousVersion: nil))
        #expect(try decoder.decode(Report.self, from: Data(#"{"status":"x"}"#.utf8)) == Report(status: "x", previousVersion: nil))
        #expect(try decoder.decode(Report.self, from: Data(#"{"status":"x","previousVersion":"2"}"#.utf8)) == Report(status: "x", previousVersion: "2"))
    }

    /// Every report of the library writes each of its keys, absent values included.
    @Test func reportsWriteEveryKey() throws {
        let encoder = JSONEncoder()
        func keys(_ value: some Encodable) throws -> Set<String> {
            Set((try JSONSerialization.jsonObject(with: encoder.encode(value)) as? [String: Any] ?? [:]).keys)
        }
        #expect(try keys(CreateResult(failed: .xar, by: ReadError.io(path: "src", "Permission denied"))) == ["output", "format", "productIdentifier", "contentVersion",
                                                                          "fileCount", "payloadBytes", "archiveBytes", "sha256", "skipped", "diagnostics"])
        #expect(try keys(PackageReport(unchecked: "a.pkg", diagnostics: [])) == ["path", "valid", "format", "wrapper", "productIdentifier",
                                                                                 "contentVersion", "fileCount", "payloadBytes", "archiveBytes", "diagnostics"])
        #expect(try keys(InspectReport(path: "a.pkg", diagnostics: [])) == ["path", "format", "wrapper", "productIdentifier", "contentVersion",
                                                                            "compression", "checksum", "fileCount", "payloadBytes", "archiveBytes",
                                                                            "files", "diagnostics"])
        #expect(try keys(Diagnostic(.unreadableInput, path: nil, "x")) == ["code", "severity", "path", "message"])
    }
}
