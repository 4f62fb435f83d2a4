import Foundation
import Testing
import TestSupport

/// Holds PkgKit to the layers its `Sources/PkgKit/README.md` lists: no file names a type or free
/// function declared in a layer it may not use, and every file sits in a listed layer.
@Suite struct LayeringTests {
    static let moduleRoot = CommandRunner.packageRoot.appendingPathComponent("Sources/PkgKit").path

    @Test func everyFileUsesOnlyTheLayersBelowIt() throws {
        let layers = try Layer.table(readme: Self.moduleRoot + "/README.md")
        let sources = try SourceFile.all(under: Self.moduleRoot)
        #expect(layers.count >= 5, "the README's layer table was not found")
        var unplaced: [String] = []
        var declaredIn: [String: (layer: String, file: String)] = [:]
        var freeFunctions: [String: (layer: String, file: String)] = [:]
        var layerOf: [String: String] = [:]
        for source in sources {
            guard let layer = Layer.owning(source.relativePath, in: layers) else {
                unplaced.append(source.relativePath)
                continue
            }
            layerOf[source.relativePath] = layer.name
            for name in source.declaredTypes { declaredIn[name] = declaredIn[name] ?? (layer.name, source.relativePath) }
            for name in source.declaredFunctions { freeFunctions[name] = freeFunctions[name] ?? (layer.name, source.relativePath) }
        }
        #expect(unplaced.isEmpty, "files outside every layer of the README's table: \(unplaced)")

        let allowed = Dictionary(uniqueKeysWithValues: layers.map { ($0.name, Set($0.mayUse + [$0.name])) })
        var violations: [String] = []
        for source in sources {
            guard let layer = layerOf[source.relativePath], let mayUse = allowed[layer] else { continue }
            var seen = Set<String>()
            for use in source.references {
                let owner = use.isCall ? (declaredIn[use.name] ?? freeFunctions[use.name]) : declaredIn[use.name]
                guard let owner, !mayUse.contains(owner.layer), seen.insert(use.name).inserted else { continue }
                violations.append("\(source.relativePath) (\(layer)) uses \(use.name) from \(owner.file) (\(owner.layer))")
            }
        }
        #expect(violations.isEmpty, "layer violations:\n\(violations.joined(separator: "\n"))")
    }

    /// Exit statuses belong to the command line alone: the library reports values and typed errors,
    /// and `Sources/pkgtool/Frontend/ExitStatus.swift` maps them, in one place.
    @Test func theLibraryNeverPicksAnExitStatus() throws {
        let commandLineWords: Set<String> = ["exit", "_exit", "exitCode", "ExitCode", "exitStatus", "EXIT_SUCCESS", "EXIT_FAILURE", "ArgumentParser"]
        var found: [String] = []
        for source in try SourceFile.all(under: Self.moduleRoot) {
            for name in Set(source.references.map(\.name)).intersection(commandLineWords).sorted() {
                found.append("\(source.relativePath): \(name)")
            }
        }
        #expect(found.isEmpty, "command-line concerns in PkgKit:\n\(found.joined(separator: "\n"))")
        let probe = SourceFile(relativePath: "Support/P.swift", text: "// exit in a comment\nvar exitCode: Int32 { 2 }\n")
        #expect(probe.references.map(\.name).contains("exitCode") && !probe.references.map(\.name).contains("exit"), "the search misses what it looks for")
    }

    /// The check itself must catch a use that points up, or it proves nothing.
    @Test func anUpwardUseIsFound() throws {
        let lower = SourceFile(relativePath: "Support/A.swift", text: "struct Low {}\nfunc helper() {}\n")
        let upper = SourceFile(relativePath: "Install/B.swift", text: "struct High { let low = Low() }\n")
        let offender = SourceFile(relativePath: "Support/C.swift", text: "// High is fine in a comment\nlet x = \"High\"\nlet y = High()\n")
        #expect(lower.declaredTypes == ["Low"] && lower.declaredFunctions == ["helper"])
        #expect(upper.references.contains { $0.name == "Low" })
        #expect(offender.references.map(\.name).filter { $0 == "High" }.count == 1, "comments and strings are not uses")
    }
}

/// One row of the README's layer table, as the compiler's check reads it too.
private typealias Layer = LayerTypeCheck.Layer

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

    private static let modifiers = #"(?:(?:public|internal|private|fileprivate|package|final|open|indirect|nonisolated|@\w+(?:\([^)]*\))?)\s+)*"#

    /// Types declared at the top level (a line that starts with the declaration).
    var declaredTypes: [String] { topLevel(#"(?:struct|class|enum|protocol|typealias|actor)"#) }
    /// Free functions declared at the top level.
    var declaredFunctions: [String] { topLevel("func") }

    private func topLevel(_ keyword: String) -> [String] {
        let pattern = try! Regex("(?m)^" + Self.modifiers + keyword + #"\s+([A-Za-z_][A-Za-z0-9_]*)"#)
        return code.matches(of: pattern).compactMap { $0.output[1].substring.map(String.init) }
    }

    /// Every identifier used, and whether it is called as a free function (not `x.name(`).
    var references: [(name: String, isCall: Bool)] {
        let pattern = try! Regex(#"(\.|func\s+)?\b([A-Za-z_][A-Za-z0-9_]*)\b(\s*\()?"#)
        return code.matches(of: pattern).compactMap { match in
            guard let name = match.output[2].substring else { return nil }
            return (String(name), match.output[1].substring == nil && match.output[3].substring != nil)
        }
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
