import Foundation
import PkgKitDiagnostics
import PkgKitCatalog

/// A valid package on its way into a published folder, with the catalog entry it gets.
struct PublishCandidate: Sendable {
    /// Its position in the report's `packages`.
    package var index: Int
    /// The package file given.
    package var source: String
    /// Its IAPProductIdentifier.
    package var productIdentifier: String
    /// Its entry: `url` is `<id>/<version>.pkg`.
    package var entry: CatalogVersion
}

/// What a publish will do, decided from the folder's catalog and signatures and the candidates
/// alone, before anything is written: a pure value, so every refusal is known up front.
struct PublishPlan: Sendable {
    /// The catalog after the publish.
    package var catalog: Catalog
    /// Candidates whose file must be copied (not yet published).
    package var copies: [PublishCandidate] = []
    /// Indexes of packages already published with the same bytes.
    package var unchanged: Set<Int> = []
    /// Refusals by package index (`version-not-bumped`).
    package var refusals: [Int: [Diagnostic]] = [:]
    /// Refusals about the folder (its signature).
    var folderRefusals: [Diagnostic] = []
    /// Entries `--keep` removes, with their product.
    package var removed: [(productIdentifier: String, entry: CatalogVersion)] = []
    /// The signature files to write before the catalog, oldest first: digest (the name without
    /// `.sig`) and contents. The last is the new catalog's; one is written only when the file
    /// there differs.
    var signatureFiles: [(digest: String, contents: Data)] = []

    var isRefused: Bool { !refusals.isEmpty || !folderRefusals.isEmpty }

    /// Decides a publish of `candidates` into `folder`, whose catalog is `existing` (its bytes
    /// `existingBytes`, nil when there is none); `signatures` holds what the folder says about
    /// that catalog's signature.
    package static func make(folder: String, existing: Catalog, existingBytes: Data?, signatures: PublishedSignatures,
                     candidates: [PublishCandidate], keep: Int?, keys: [CatalogSigningKey]) -> PublishPlan {
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
        plan.decideSignatures(folder: folder, newBytes: plan.catalog.encoded(), existingBytes: existingBytes, signatures: signatures, keys: keys)
        return plan
    }

    /// A signed folder stays signed with a key its clients trust: publishing into it without
    /// `--sign`, or with no key its published signature verifies with, would leave every client
    /// that trusts the old key refusing the catalog. Rotation works because one of the keys given
    /// (the old one, beside the new) still verifies it.
    private mutating func decideSignatures(folder: String, newBytes: Data, existingBytes: Data?, signatures: PublishedSignatures,
                                           keys: [CatalogSigningKey]) {
        guard let existingBytes, let published = signatures.current ?? signatures.legacy else {
            if !keys.isEmpty { signatureFiles.append((CatalogSignature.digest(of: newBytes), CatalogSignature.fileContents(signing: newBytes, with: keys))) }
            return
        }
        let path = folder + "/" + (signatures.current == nil ? Catalog.legacySignatureFileName : CatalogSignature.relativePath(for: existingBytes))
        guard !keys.isEmpty else {
            if newBytes != existingBytes {
                folderRefusals.append(Diagnostic(.badSignature, path: path,
                    words: "the published catalog is signed: \(hint: .signCatalog) so that the new catalog is signed too (or delete this file to stop signing)"))
            }
            return
        }
        do {
            try CatalogSignature.verify(existingBytes, signatureFile: published, trustedKeys: keys.map(\.publicKey), path: path)
        } catch {
            folderRefusals.append(Diagnostic(.badSignature, path: path,
                words: "the published catalog's signature verifies with no key given: clients trust the key it was signed with; sign with that key too \(hint: .rotateKeys), or delete this file to change keys on purpose"))
            return
        }
        if signatures.current == nil && newBytes != existingBytes {
            // A folder signed only in catalog.json.sig: its catalog gets a signature file too, so
            // that a client served it stale by a cache still verifies it.
            signatureFiles.append((CatalogSignature.digest(of: existingBytes), CatalogSignature.fileContents(signing: existingBytes, with: keys)))
        }
        signatureFiles.append((CatalogSignature.digest(of: newBytes), CatalogSignature.fileContents(signing: newBytes, with: keys)))
    }
}

/// What a published folder holds about its catalog's signature, read before a publish.
struct PublishedSignatures: Sendable {
    /// `signatures/<sha256>.sig` of the published catalog, when present.
    package var current: Data?
    /// `catalog.json.sig`, as pkgtool wrote it before signature files were named by digest.
    var legacy: Data?
}
