import Foundation
@testable import PkgKit
import Testing

/// The sync decision as a value: every branch of SPEC section 7's rules, with no file, server
/// or clock involved.
@Suite struct SyncPlanTests {
    static let catalogURL = URL(string: "https://cdn.test/content/catalog.json")!

    static func entry(_ version: String, size: Int64 = 1 << 20, payload: Int64 = 2 << 20, toc: Bool = true) -> CatalogVersion {
        CatalogVersion(contentVersion: ContentVersion(version)!, url: "com.x/\(version).pkg", size: size, sha256: String(repeating: "a", count: 64),
                       tocSHA256: toc ? String(repeating: "b", count: 64) : nil, fileCount: 3, payloadBytes: payload)
    }

    static func product(_ entries: CatalogVersion...) -> CatalogProduct {
        CatalogProduct(productIdentifier: "com.x", latest: entries[0].contentVersion, versions: entries)
    }

    static func situation(_ product: CatalogProduct?, installed: String? = nil, folder: String? = nil, partial: Int64 = 0,
                          ranges: Bool? = nil, delta: Bool = true, requested: Bool = true, maxSize: Int64 = 2 << 30) -> SyncSituation {
        SyncSituation(productIdentifier: "com.x", requested: requested, product: product, catalogURL: catalogURL,
                      installedVersion: installed, installedFolder: folder ?? installed, partialBytes: partial,
                      serverHonoursRange: ranges, deltaAllowed: delta, limits: PackageLimits(maxSize: maxSize))
    }

    func method(_ plan: SyncPlan) -> SyncPlan.Method? {
        if case .update(let update) = plan { return update.method }
        return nil
    }

    func code(_ plan: SyncPlan) -> DiagnosticCode? {
        if case .refused(let diagnostic) = plan { return diagnostic.code }
        return nil
    }

    @Test func nothingInstalledMeansOneWholeDownload() {
        let plan = SyncPlan.make(Self.situation(Self.product(Self.entry("1.1"), Self.entry("1.0"))))
        guard case .update(let update) = plan else { Issue.record("\(plan)"); return }
        #expect(update.entry.contentVersion.description == "1.1")
        #expect(update.url.absoluteString == "https://cdn.test/content/com.x/1.1.pkg")
        #expect(update.previousVersion == nil)
        #expect(update.method == .full(resumingFrom: 0, reason: nil))
    }

    @Test func anOlderInstalledVersionIsUpdatedByDelta() {
        let plan = SyncPlan.make(Self.situation(Self.product(Self.entry("1.1")), installed: "1.0"))
        #expect(method(plan) == .delta(from: "1.0"))
    }

    @Test func theSameOrANewerVersionIsUnchanged() {
        let product = Self.product(Self.entry("1.1"))
        #expect(SyncPlan.make(Self.situation(product, installed: "1.1")) == .unchanged(installed: "1.1", latest: "1.1"))
        // 1.1.0 is 1.1: no update, whatever the spelling.
        #expect(SyncPlan.make(Self.situation(product, installed: "1.1.0")) == .unchanged(installed: "1.1.0", latest: "1.1"))
        #expect(SyncPlan.make(Self.situation(product, installed: "2.0")) == .unchanged(installed: "2.0", latest: "1.1"))
    }

    @Test func aRecordWhoseFolderIsGoneIsInstalledAgain() {
        var situation = Self.situation(Self.product(Self.entry("1.1")), installed: "1.1")
        situation.installedFolder = nil
        #expect(method(SyncPlan.make(situation)) == .full(resumingFrom: 0, reason: nil))
    }

    @Test func whyADeltaIsNotUsed() {
        let product = Self.product(Self.entry("1.1"))
        #expect(method(SyncPlan.make(Self.situation(product, installed: "1.0", delta: false))) == .full(resumingFrom: 0, reason: .noDelta))
        #expect(method(SyncPlan.make(Self.situation(product, installed: "1.0", ranges: false)))
                == .full(resumingFrom: 0, reason: .serverIgnoresRange))
        #expect(method(SyncPlan.make(Self.situation(product, installed: "1.0", partial: 5000))) == .full(resumingFrom: 5000, reason: .resuming))
        #expect(method(SyncPlan.make(Self.situation(Self.product(Self.entry("1.1", toc: false)), installed: "1.0")))
                == .full(resumingFrom: 0, reason: .noTableOfContents))
        #expect(method(SyncPlan.make(Self.situation(Self.product(Self.entry("1.1", size: 1000)), installed: "1.0")))
                == .full(resumingFrom: 0, reason: .small))
        // A server known to honour Range changes nothing: a delta is the default.
        #expect(method(SyncPlan.make(Self.situation(product, installed: "1.0", ranges: true))) == .delta(from: "1.0"))
    }

    @Test func aResumeNeverStartsPastTheEnd() {
        let plan = SyncPlan.make(Self.situation(Self.product(Self.entry("1.1", size: 4000)), partial: 9000))
        #expect(method(plan) == .full(resumingFrom: 4000, reason: nil))
    }

    @Test func anEntryOverTheLimitBySizeOrPayloadIsRefused() {
        let big = Self.product(Self.entry("1.1", size: 5000, payload: 100))
        #expect(code(SyncPlan.make(Self.situation(big, maxSize: 4999))) == .sizeLimit)
        #expect(method(SyncPlan.make(Self.situation(big, maxSize: 5000))) != nil, "at the limit is within it")
        let wide = Self.product(Self.entry("1.1", size: 100, payload: 5000))
        #expect(code(SyncPlan.make(Self.situation(wide, maxSize: 4999))) == .sizeLimit)
        #expect(method(SyncPlan.make(Self.situation(wide, maxSize: 5000))) != nil)
    }

    @Test func aProductTheCatalogDoesNotListIsRefusedOnlyWhenAskedFor() {
        #expect(code(SyncPlan.make(Self.situation(nil))) == .unknownProduct)
        #expect(SyncPlan.make(Self.situation(nil, installed: "1.0", requested: false)) == .notListed(installed: "1.0"))
    }

    /// The refusal names up to ten of the catalog's products, nearest first, and how many more.
    @Test func anUnknownProductIsRefusedNamingTheNearestListedOnes() {
        var situation = Self.situation(nil)
        situation.catalogProducts = (0..<12).map { "com.y\($0)" } + ["com.xx"]
        guard case .refused(let diagnostic) = SyncPlan.make(situation) else { Issue.record("not refused"); return }
        #expect(diagnostic.code == .unknownProduct)
        #expect(diagnostic.message == "the catalog lists no product com.x; it lists com.xx, "
            + (0..<9).map { "com.y\($0)" }.joined(separator: ", ") + " and 3 more: check the identifier, or publish it first")
        situation.catalogProducts = []
        guard case .refused(let empty) = SyncPlan.make(situation) else { Issue.record("not refused"); return }
        #expect(empty.message.hasPrefix("the catalog lists no product com.x, nor any other"))
    }

    @Test func anUnusableURLIsAnInvalidCatalog() {
        var entry = Self.entry("1.1")
        entry.url = "ftp://elsewhere/1.1.pkg"
        #expect(code(SyncPlan.make(Self.situation(Self.product(entry)))) == .invalidCatalog)
    }
}
