import Foundation
import Observation
import PkgKit

/// The app's downloadable content as its screens show it: the current run's progress and the
/// last run's outcome, on the main actor, where SwiftUI reads them.
@available(iOS 17, macOS 14, tvOS 17, *)
@MainActor @Observable
final class ContentLibrary {
    /// The current run's progress (nil before the first run).
    private(set) var progress: SyncProgress?
    /// The last run's report (nil until one ends).
    private(set) var report: SyncReport?
    /// True when the last run was cancelled: what it downloaded is kept, and the next run resumes it.
    private(set) var wasCancelled = false
    /// Called with each progress value, for code that is not SwiftUI (a UIKit view, a log).
    var onProgress: ((SyncProgress) -> Void)?

    private let client: SyncClient
    private let trust: CatalogTrust
    private var run: SyncRun?

    /// The content of the catalog at `catalogURL`, installed under `folder`.
    init(catalogURL: URL, folder: URL, trust: CatalogTrust) {
        client = SyncClient(catalogURL: catalogURL, documents: folder)
        self.trust = trust
    }

    /// Brings `products` (the ones the user owns) up to date, or with none, every product installed.
    func update(_ products: [String] = []) async {
        let run = client.startSync(SyncClient.Options(products: products, trust: trust))
        self.run = run
        wasCancelled = false
        for await step in run.progress {
            progress = step  // on the main actor, in order: fraction never goes back, 1 at the end
            onProgress?(step)
        }
        do {
            report = try await run.report
        } catch {
            wasCancelled = true  // OperationCancelled: the only error a sync throws
        }
        self.run = nil
    }

    /// Takes over `folder`, the content an earlier version of the app downloaded through
    /// SKDownload (its folder, or the `Contents/` copied out of it), as installed `version` of
    /// `product`: every file is checked against that version in the catalog and only what differs
    /// is downloaded, so the next update is a delta. The folder is deleted once it is installed.
    func adopt(_ folder: URL, as version: String, of product: String) async {
        do {
            let adopted = try await client.adopt(folder, as: version, of: product, options: SyncClient.Options(trust: trust))
            report = adopted
            if adopted.products.first?.status == .installed { try? FileManager.default.removeItem(at: folder) }
        } catch {
            wasCancelled = true
        }
    }

    /// Stops the current run within moments; the next `update` resumes its download.
    func cancel() {
        run?.cancel()
    }

    /// Where `product`'s current version is installed, when it is.
    func folder(of product: String) -> URL? {
        report?.products.first { $0.productIdentifier == product }?.installedURL
    }
}
