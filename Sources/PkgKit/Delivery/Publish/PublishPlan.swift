import Foundation

/// A valid package on its way into a published folder, with the catalog entry it gets.
struct PublishCandidate: Sendable {
    /// Its position in the report's `packages`.
    var index: Int
    /// The package file given.
    var source: String
    /// Its IAPProductIdentifier.
    var productIdentifier: String
    /// Its entry: `url` is `<id>/<version>.pkg`.
    var entry: CatalogVersion
}

/// What a publish will do, decided from the folder's catalog and signature and the candidates
/// alone, before anything is written: a pure value, so every refusal is known up front.
struct PublishPlan: Sendable {
    /// The catalog after the publish.
    var catalog: Catalog
    /// Candidates whose file must be copied (not yet published).
    var copies: [PublishCandidate] = []
    /// Indexes of packages already published with the same bytes.
    var unchanged: Set<Int> = []
    /// Refusals by package index (`version-not-bumped`).
    var refusals: [Int: [Diagnostic]] = [:]
    /// Refusals about the folder (its signature).
    var folderRefusals: [Diagnostic] = []
    /// Entries `--keep` removes, with their product.
    var removed: [(productIdentifier: String, entry: CatalogVersion)] = []
    /// The signature file to write, when it must change.
    var signature: Data?

    var isRefused: Bool { !refusals.isEmpty || !folderRefusals.isEmpty }

    /// Decides a publish of `candidates` into a folder whose catalog is `existing` (its bytes
    /// `existingBytes`, nil when there is none) and whose signature file holds `existingSignature`.
    static func make(existing: Catalog, existingBytes: Data?, existingSignature: Data?, candidates: [PublishCandidate],
                     keep: Int?, key: CatalogSigningKey?) -> PublishPlan {
        var plan = PublishPlan(catalog: existing)
        var added: [String: [(index: Int, entry: CatalogVersion)]] = [:]
        for candidate in candidates {
            let id = candidate.productIdentifier, entry = candidate.entry, version = entry.contentVersion
            if let twin = added[id]?.first(where: { $0.entry.contentVersion == version }) {
                if twin.entry.sha256 == entry.sha256 {
                    plan.unchanged.insert(candidate.index)
                } else {
                    plan.refusals[candidate.index, default: []].append(Diagnostic(.versionNotBumped, path: nil,
                        "\(id) \(version) is given twice with different bytes: give each version once"))
                }
                continue
            }
            if let product = existing.product(id) {
                if let published = product.version(version) {
                    if published.sha256 == entry.sha256 && published.size == entry.size {
                        plan.unchanged.insert(candidate.index)
                    } else {
                        plan.refusals[candidate.index, default: []].append(Diagnostic(.versionNotBumped, path: nil,
                            "\(id) \(published.contentVersion) is already published with different bytes (sha256 \(published.sha256.prefix(12))…): published files never change; bump ContentVersion"))
                    }
                    continue
                }
                if version < product.latest {
                    plan.refusals[candidate.index, default: []].append(Diagnostic(.versionNotBumped, path: nil,
                        "\(id) \(version) is lower than the published latest \(product.latest): publish a version above it"))
                    continue
                }
            }
            added[id, default: []].append((candidate.index, entry))
            plan.copies.append(candidate)
        }
        guard !plan.isRefused else { return plan }

        // The catalog after: what was there, plus the new entries, less what --keep drops.
        var products: [String: CatalogProduct] = [:]
        for product in existing.products { products[product.productIdentifier] = product }
        for (id, entries) in added {
            var product = products[id] ?? CatalogProduct(productIdentifier: id, latest: entries[0].entry.contentVersion, versions: [])
            product.versions += entries.map(\.entry)
            products[id] = product
        }
        for id in products.keys {
            var product = products[id]!
            product.versions.sort { $0.contentVersion > $1.contentVersion }
            if let keep, product.versions.count > keep {
                plan.removed += product.versions[keep...].map { (id, $0) }
                product.versions.removeSubrange(keep...)
            }
            product.latest = product.versions[0].contentVersion
            products[id] = product
        }
        plan.catalog = Catalog(products: products.values.sorted { $0.productIdentifier.utf8.lexicographicallyPrecedes($1.productIdentifier.utf8) })
        plan.decideSignature(newBytes: plan.catalog.encoded(), existingBytes: existingBytes, existingSignature: existingSignature, key: key)
        return plan
    }

    /// A signed folder stays signed with the same key: publishing into it without `--sign`, or
    /// with a key its signature does not verify with, would leave every client that trusts the
    /// old key refusing the catalog.
    private mutating func decideSignature(newBytes: Data, existingBytes: Data?, existingSignature: Data?, key: CatalogSigningKey?) {
        guard let key else {
            if existingSignature != nil && newBytes != existingBytes {
                folderRefusals.append(Diagnostic(.badSignature, path: Catalog.signatureFileName,
                    "the published catalog is signed: publish with --sign KEY.pem so that the new catalog is signed too (or delete \(Catalog.signatureFileName) to stop signing)"))
            }
            return
        }
        if let existingSignature, let existingBytes {
            do {
                try key.publicKey.verify(catalog: existingBytes, signatureFile: existingSignature)
            } catch {
                folderRefusals.append(Diagnostic(.badSignature, path: Catalog.signatureFileName,
                    "the published catalog's signature does not verify with this key: it was signed with another key, which clients trust; sign with that key (or delete \(Catalog.signatureFileName) to change keys on purpose)"))
                return
            }
        }
        let file = key.signatureFile(for: newBytes)
        if file != existingSignature { signature = file }
    }
}
