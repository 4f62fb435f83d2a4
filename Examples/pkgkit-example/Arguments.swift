import Foundation
import PkgKit

/// What the example is asked to do, from its command line.
struct Arguments {
    /// The catalog: an `http(s)` URL, or a local `catalog.json`.
    var catalogURL: URL
    /// Where content is installed.
    var folder: URL
    /// The products to bring up to date (none: every one installed).
    var products: [String] = []
    /// Which catalogs are accepted.
    var trust: CatalogTrust
    /// Cancel the run once this many bytes of its work are done (to show a resume).
    var cancelAfterBytes: Int64?
    /// Content an earlier version of the app downloaded, to adopt before the update, and the
    /// version it holds.
    var adopt: (folder: URL, version: String)?

    /// What a wrong command line prints.
    static let usage = """
        usage: pkgkit-example CATALOG-URL --documents DIR [--product ID]... (--trust KEY.pub.pem | --unsigned) [--cancel-after-bytes N]
               [--adopt FOLDER --adopt-version V]

        Brings the products (or every installed one) up to date from the catalog, as an app does with
        PkgKit, printing each progress value. --cancel-after-bytes cancels the run once N bytes of its
        work are done; run again to resume. --adopt takes over FOLDER (content SKDownload delivered,
        for the one --product given) as installed version V first. Exit status: 0 done, 1 a product failed or was refused,
        2 usage, 3 cancelled.
        """

    /// Reads `arguments` (the program's, without its name).
    init(_ arguments: [String]) throws(UsageError) {
        var catalog: String?, folder: String?, keyFile: String?, unsigned = false
        var adoptFolder: String?, adoptVersion: String?
        var rest = arguments[...]
        func value(of flag: String) throws(UsageError) -> String {
            guard let value = rest.popFirst() else { throw UsageError("\(flag) needs a value") }
            return value
        }
        while let argument = rest.popFirst() {
            switch argument {
            case "--documents": folder = try value(of: argument)
            case "--product": products.append(try value(of: argument))
            case "--trust": keyFile = try value(of: argument)
            case "--unsigned": unsigned = true
            case "--adopt": adoptFolder = try value(of: argument)
            case "--adopt-version": adoptVersion = try value(of: argument)
            case "--cancel-after-bytes":
                guard let bytes = Int64(try value(of: argument)), bytes >= 0 else { throw UsageError("--cancel-after-bytes needs a number") }
                cancelAfterBytes = bytes
            case _ where argument.hasPrefix("-"): throw UsageError("unknown option \(argument)")
            default:
                guard catalog == nil else { throw UsageError("one catalog URL only") }
                catalog = argument
            }
        }
        guard let catalog, let folder else { throw UsageError("a catalog URL and --documents are needed") }
        // A local catalog is a path; a server's, a URL.
        catalogURL = catalog.contains("://") ? try Self.url(catalog) : URL(fileURLWithPath: catalog)
        self.folder = URL(fileURLWithPath: folder, isDirectory: true)
        switch (adoptFolder, adoptVersion) {
        case (nil, nil): break
        case (let adoptFolder?, let adoptVersion?):
            guard products.count == 1 else { throw UsageError("--adopt needs the one --product its folder holds") }
            adopt = (URL(fileURLWithPath: adoptFolder, isDirectory: true), adoptVersion)
        default: throw UsageError("--adopt and --adopt-version go together")
        }
        switch (keyFile, unsigned) {
        case (let keyFile?, false):
            do {
                let pem = try String(contentsOf: URL(fileURLWithPath: keyFile), encoding: .utf8)
                trust = .signed(by: try CatalogVerifyingKey(pem: pem))
            } catch {
                throw UsageError("cannot use \(keyFile) as the publisher's key: \(error)")
            }
        case (nil, true): trust = .unsigned
        default: throw UsageError("give --trust KEY.pub.pem, or --unsigned to accept any catalog")
        }
    }

    /// The server URL `text`.
    private static func url(_ text: String) throws(UsageError) -> URL {
        guard let url = URL(string: text) else { throw UsageError("not a URL: \(text)") }
        return url
    }
}

/// A command line the example cannot run.
struct UsageError: Error {
    /// What is wrong with it.
    var message: String
    /// The error `message` says.
    init(_ message: String) { self.message = message }
}
