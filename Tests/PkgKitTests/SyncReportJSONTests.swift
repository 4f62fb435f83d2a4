import Foundation
import PkgKit
import Testing

/// A sync's report and a check's as `--json` writes them: the same top-level fields, and for each
/// product a sync's what it did, a check's what a sync would do (and nothing only an install has).
@Suite struct SyncReportJSONTests {
    static let id = "com.example.json"

    static func json(_ report: SyncReport) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(report), as: UTF8.self)
    }

    /// A product's result with every field a sync or a check may fill in.
    static var result: ProductSyncResult {
        var result = ProductSyncResult(productIdentifier: id, status: .update, previousVersion: "1.0", contentVersion: "1.1",
                                       bytesDownloaded: 4096, installedPath: "Documents/\(id)/1.1")
        result.bytesToDownload = 2532
        result.fullDownloadReason = .small
        result.removedVersions = ["0.9"]
        return result
    }

    @Test func aCheckWritesWhatASyncWouldDo() throws {
        let report = SyncReport(products: [Self.result], bytesDownloaded: 1024, signature: .verified, mode: .check)
        #expect(try Self.json(report) == #"{"bytesDownloaded":1024,"diagnostics":[],"products":[{"bytesToDownload":2532,"#
            + #""contentVersion":"1.1","delta":false,"diagnostics":[],"fullDownloadReason":"small package","previousVersion":"1.0","#
            + #""productIdentifier":"com.example.json","resumedFrom":null,"status":"update"}],"signature":"verified"}"#)
    }

    @Test func aSyncWritesWhatItDid() throws {
        var result = Self.result
        result.status = .installed
        let report = SyncReport(products: [result], bytesDownloaded: 5120, signature: nil)
        #expect(try Self.json(report) == #"{"bytesDownloaded":5120,"diagnostics":[],"products":[{"bytesDownloaded":4096,"#
            + #""contentVersion":"1.1","delta":false,"diagnostics":[],"filesDownloaded":null,"fullDownloadReason":"small package","#
            + #""installedPath":"Documents/com.example.json/1.1","listed":true,"previousVersion":"1.0","#
            + #""productIdentifier":"com.example.json","removedVersions":["0.9"],"resumedFrom":null,"status":"installed"}],"signature":null}"#)
    }

    @Test func aCheckWithAnUpdateHasUpdatesAvailableUnlessSomethingIsRefused() {
        let update = ProductSyncResult(productIdentifier: Self.id, status: .update)
        let refused = ProductSyncResult(productIdentifier: "com.example.other", status: .refused)
        #expect(SyncReport(products: [update], mode: .check).outcome == .updatesAvailable)
        #expect(SyncReport(products: [update, refused], mode: .check).outcome == .refused)
        #expect(SyncReport(products: [ProductSyncResult(productIdentifier: Self.id)], mode: .check).outcome == .success)
    }
}
