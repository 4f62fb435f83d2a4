import Foundation
import Testing
import TestSupport

/// Holds PkgKit to the layers its `Sources/PkgKit/README.md` lists. Each layer is a module whose
/// dependencies in `Package.swift` are its "may use" column, so the compiler refuses any use of a
/// layer above; these tests hold `Package.swift` and the files to that table.
@Suite struct LayeringTests {
    static let moduleRoot = CommandRunner.packageRoot.appendingPathComponent("Sources/PkgKit").path

    /// Package.swift builds the layers the README lists, each depending on the ones it may use.
    @Test func thePackageManifestHasTheReadmesLayers() throws {
        let readme = try Layer.table(readme: Self.moduleRoot + "/README.md")
        #expect(readme.count >= 5, "the README's layer table was not found")
        let manifest = try Layer.table(manifest: CommandRunner.packageRoot.appendingPathComponent("Package.swift").path)
        #expect(manifest == readme, "Package.swift's pkgKitLayers and the README's table differ:\n\(manifest)\n\(readme)")
    }

    /// Every file sits in a listed layer (a new folder would otherwise join the `PkgKit` module
    /// that only re-exports the layers), and imports only the layers its own may use: the build
    /// puts every module it has made on the search path, so an undeclared import of a layer that
    /// happened to be built first would compile.
    @Test func everyFileImportsOnlyTheLayersItMayUse() throws {
        let layers = try Layer.table(readme: Self.moduleRoot + "/README.md")
        var unplaced: [String] = []
        var violations: [String] = []
        for source in try SourceFile.all(under: Self.moduleRoot) {
            guard let layer = Layer.owning(source.relativePath, in: layers) else {
                if source.relativePath != Layer.umbrellaFile { unplaced.append(source.relativePath) }
                continue
            }
            violations += layer.importViolations(in: source)
        }
        #expect(unplaced.isEmpty, "files outside every layer of the README's table: \(unplaced)")
        #expect(violations.isEmpty, "layer violations:\n\(violations.joined(separator: "\n"))")
    }

    /// The check must catch an import that points up, however it is written, or it proves nothing.
    @Test func anUpwardImportIsFound() throws {
        let format = Layer(name: "Format", folder: "Format/", mayUse: ["Support"])
        let source = SourceFile(relativePath: "Format/A.swift", text: """
            import Foundation
            import PkgKitSupport
            // import PkgKitSync in a comment is not an import
            @testable import PkgKitInstall
            #if os(Linux)
            package import PkgKitTransport
            #endif
            import struct PkgKitSync.SyncPlan
            let text = "import PkgKitCatalog"
            """)
        #expect(format.importViolations(in: source) == [
            "Format/A.swift (Format) imports PkgKitInstall", "Format/A.swift (Format) imports PkgKitTransport",
            "Format/A.swift (Format) imports PkgKitSync",
        ])
    }

    /// Exit statuses belong to the command line alone: the library reports values and typed errors,
    /// and `Sources/pkgtool/Frontend/ExitStatus.swift` maps them, in one place.
    @Test func theLibraryNeverPicksAnExitStatus() throws {
        let commandLineWords: Set<String> = ["exit", "_exit", "exitCode", "ExitCode", "exitStatus", "EXIT_SUCCESS", "EXIT_FAILURE", "ArgumentParser"]
        var found: [String] = []
        for source in try SourceFile.all(under: Self.moduleRoot) {
            for name in Set(source.references).intersection(commandLineWords).sorted() {
                found.append("\(source.relativePath): \(name)")
            }
        }
        #expect(found.isEmpty, "command-line concerns in PkgKit:\n\(found.joined(separator: "\n"))")
        let probe = SourceFile(relativePath: "Support/P.swift", text: "// exit in a comment\nvar exitCode: Int32 { 2 }\n")
        #expect(probe.references.contains("exitCode") && !probe.references.contains("exit"), "the search misses what it looks for")
    }

    /// No object file of the library's debug build calls `exit`, however the call is spelled.
    @Test func theLibrarysObjectsNeverCallExit() throws {
        let layers = try Layer.table(readme: Self.moduleRoot + "/README.md")
        let debug = CommandRunner.packageRoot.appendingPathComponent(".build/debug").path
        var objects: [String] = []
        for module in ["PkgKit"] + layers.map(\.module) {
            let folder = "\(debug)/\(module).build"
            let files = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".o") }.sorted()
            try #require(!files.isEmpty, "no debug build of \(module) in \(folder)")
            objects += files.map { folder + "/" + $0 }
        }
        let calls = try Self.exitCalls(inObjects: objects)
        #expect(calls.isEmpty, "PkgKit calls exit (the command line picks exit statuses):\n\(calls.joined(separator: "\n"))")

        // The scan itself finds a call when there is one.
        let scratch = try Scratch()
        let planted = try scratch.write("planted.c", "#include <stdlib.h>\nvoid planted(void) { exit(2); }\n")
        let object = scratch.path("planted.o")
        let compiled = try CommandRunner.run("/usr/bin/env", ["cc", "-c", planted, "-o", object])
        try #require(compiled.status == 0, "cc: \(compiled.stderr)")
        #expect(try Self.exitCalls(inObjects: [object]) == ["\(object): exit"])
    }

    /// The C library's ways to end the process that `objects` call: "object: symbol".
    static func exitCalls(inObjects objects: [String]) throws -> [String] {
        // -A puts the object's name before each symbol ("object: U exit"), one nm for them all.
        let symbols = try CommandRunner.run("/usr/bin/env", ["nm", "-u", "-A"] + objects)
        try #require(symbols.status == 0, "nm: \(symbols.stderr)")
        return symbols.stdout.split(separator: "\n").compactMap { line in
            guard let colon = line.range(of: ": "), let name = line.split(separator: " ").last,
                  ["exit", "_exit", "_Exit", "quick_exit"].contains(String(name)) else { return nil }
            return "\(line[..<colon.lowerBound]): \(name)"
        }
    }
}

/// One row of the README's layer table (or of Package.swift's, which must be the same).
private struct Layer: Equatable, CustomStringConvertible {
    var name: String
    /// Relative to Sources/PkgKit, ending in "/".
    var folder: String
    var mayUse: [String]

    /// The one file of the `PkgKit` module itself: it re-exports every layer.
    static let umbrellaFile = "PkgKit.swift"

    /// The layer's module.
    var module: String { "PkgKit" + name }
    var description: String { "\(name) (\(folder)): \(mayUse.joined(separator: ", "))" }

    /// The rows of the first table whose header starts `| layer | folder | may use |`.
    static func table(readme path: String) throws -> [Layer] {
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        guard let header = lines.firstIndex(where: { $0.hasPrefix("| layer | folder | may use |") }) else { return [] }
        return lines[(header + 2)...].prefix { $0.hasPrefix("|") }.map { line in
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            let uses = cells[3].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            return Layer(name: cells[1], folder: cells[2].trimmingCharacters(in: CharacterSet(charactersIn: "`")), mayUse: uses)
        }
    }

    /// The rows of Package.swift's `pkgKitLayers`: `("Format", "Format", ["Support"]),`.
    static func table(manifest path: String) throws -> [Layer] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let start = try #require(text.range(of: "let pkgKitLayers"), "no pkgKitLayers in \(path)")
        let rows = text[start.upperBound...].split(separator: "\n").dropFirst().prefix { !$0.hasPrefix("]") }
        return rows.compactMap { row in
            guard let match = row.firstMatch(of: /\("(\w+)", "([\w\/]+)", \[([^\]]*)\]\)/) else { return nil }
            let uses = match.3.split(separator: ",").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "\" ")) }.filter { !$0.isEmpty }
            return Layer(name: String(match.1), folder: match.2 + "/", mayUse: uses)
        }
    }

    /// The layer whose folder holds `path` (the longest folder that is a prefix).
    static func owning(_ path: String, in layers: [Layer]) -> Layer? {
        layers.filter { path.hasPrefix($0.folder) }.max { $0.folder.count < $1.folder.count }
    }

    /// "file (layer) imports module" for each PkgKit module `source` imports that this layer may not use.
    func importViolations(in source: SourceFile) -> [String] {
        let allowed = Set(mayUse.map { "PkgKit" + $0 })
        return source.imports.filter { $0.hasPrefix("PkgKit") && !allowed.contains($0) }.map {
            "\(source.relativePath) (\(name)) imports \($0)"
        }
    }
}

/// A Swift source file, read with its comments and string literals blanked out.
private struct SourceFile {
    var relativePath: String
    var code: String

    init(relativePath: String, text: String) {
        self.relativePath = relativePath
        code = Self.blankCommentsAndStrings(text)
    }

    static func all(under root: String) throws -> [SourceFile] {
        let enumerator = FileManager.default.enumerator(atPath: root)
        var files: [SourceFile] = []
        while let path = enumerator?.nextObject() as? String {
            guard path.hasSuffix(".swift") else { continue }
            files.append(SourceFile(relativePath: path, text: try String(contentsOfFile: root + "/" + path, encoding: .utf8)))
        }
        return files.sorted { $0.relativePath < $1.relativePath }
    }

    /// The modules imported, however the import is attributed or restricted.
    var imports: [String] {
        let pattern = /(?m)^[ \t]*(?:@\w+[ \t]+)*(?:\w+[ \t]+)?import[ \t]+(?:(?:struct|class|enum|protocol|typealias|func|var|let)[ \t]+)?(\w+)/
        return code.matches(of: pattern).map { String($0.output.1) }
    }

    /// Every identifier used.
    var references: [String] {
        code.matches(of: /\b[A-Za-z_][A-Za-z0-9_]*\b/).map { String($0.output) }
    }

    /// The text with `//` and `/* */` comments and string literals replaced by spaces, so that a
    /// name in a comment or a message is not a use.
    static func blankCommentsAndStrings(_ text: String) -> String {
        var out = [UInt8]()
        let bytes = Array(text.utf8)
        out.reserveCapacity(bytes.count)
        var i = 0
        func at(_ offset: Int) -> UInt8? { i + offset < bytes.count ? bytes[i + offset] : nil }
        while i < bytes.count {
            let c = bytes[i]
            if c == UInt8(ascii: "/"), at(1) == UInt8(ascii: "/") {
                while i < bytes.count, bytes[i] != UInt8(ascii: "\n") { out.append(0x20); i += 1 }
            } else if c == UInt8(ascii: "/"), at(1) == UInt8(ascii: "*") {
                var depth = 0
                repeat {
                    if bytes[i] == UInt8(ascii: "/"), at(1) == UInt8(ascii: "*") { depth += 1; out += [0x20, 0x20]; i += 2; continue }
                    if bytes[i] == UInt8(ascii: "*"), at(1) == UInt8(ascii: "/") { depth -= 1; out += [0x20, 0x20]; i += 2; continue }
                    out.append(bytes[i] == UInt8(ascii: "\n") ? 0x0A : 0x20); i += 1
                } while i < bytes.count && depth > 0
            } else if c == UInt8(ascii: "\"") {
                let triple = at(1) == UInt8(ascii: "\"") && at(2) == UInt8(ascii: "\"")
                let quote = triple ? 3 : 1
                out += Array(repeating: 0x20, count: quote); i += quote
                while i < bytes.count {
                    if bytes[i] == UInt8(ascii: "\\"), at(1) == UInt8(ascii: "(") {
                        // An interpolation is code: kept, up to its closing parenthesis.
                        out += [0x20, 0x20]; i += 2
                        var depth = 1
                        while i < bytes.count {
                            if bytes[i] == UInt8(ascii: "(") { depth += 1 }
                            if bytes[i] == UInt8(ascii: ")") { depth -= 1; if depth == 0 { break } }
                            out.append(bytes[i]); i += 1
                        }
                        out.append(0x20); i += 1
                        continue
                    }
                    if bytes[i] == UInt8(ascii: "\\") { out += [0x20, 0x20]; i += 2; continue }
                    if bytes[i] == UInt8(ascii: "\""), !triple || (at(1) == UInt8(ascii: "\"") && at(2) == UInt8(ascii: "\"")) {
                        out += Array(repeating: 0x20, count: quote); i += quote
                        break
                    }
                    if !triple && bytes[i] == UInt8(ascii: "\n") { break }
                    out.append(bytes[i] == UInt8(ascii: "\n") ? 0x0A : 0x20); i += 1
                }
            } else {
                out.append(c); i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
